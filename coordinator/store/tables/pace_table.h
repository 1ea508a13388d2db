// coordinator/store/tables/pace_table.h
//
// How far trials got and how fast they stepped, read from their metric points (the metrics table)
// and attempts: a trial's newest step of a metric, the newest step its last preempted attempt
// stored, and the pace of an attempt over its newest points of a metric. Typed reads, no rules:
// which pace and progress an estimate takes is coordinator/domain/allocation_fit.h's.
//
// A pace is one attempt's own: within an attempt, the step and wall_time (the trainer's cumulative
// seconds of training) both grow, so their differences between two of the attempt's points are the
// seconds that attempt took for those steps. Across attempts they are not comparable (an attempt
// that resumed repeats steps; another machine steps at another pace).
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(std::optional<StepPace> pace, tables.paces().NewestOfTrial(trial.id, "train_loss"));
//   if (pace) seconds_per_step = pace->seconds / static_cast<double>(pace->steps);
//
// Thread safety: as database.h (used inside a Store transaction only; tables.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "coordinator/store/store_types.h"
#include "core/common/status.h"

namespace rung {

class Database;

// What one attempt took between its first and last point of a metric.
struct StepPace {
  int64_t trial_id = 0;
  int64_t attempt = 0;
  int64_t steps = 0;   // last step - first step of the points measured over: > 0
  double seconds = 0;  // wall_time at the last of them - at the first (as stored: may be <= 0 if the worker's was)
  // The attempt's started_at - leased_at: from its lease to its trainer's provenance record, which
  // rung-train prints once its data, model and checkpoint are loaded. nullopt when it never started.
  std::optional<double> start_seconds;
};

class PaceTable {
 public:
  explicit PaceTable(Database& db) : db_(db) {}

  // The trial's newest step of `name` from any attempt; nullopt when it has no point of it. One probe
  // of the primary key.
  StatusOr<std::optional<int64_t>> NewestStep(int64_t trial_id, const std::string& name);

  // The newest step of `name` that the trial's newest PREEMPTED attempt stored (a preempted trainer
  // checkpoints at the step it stopped at); nullopt when no attempt ended PREEMPTED or it stored none.
  StatusOr<std::optional<int64_t>> NewestPreemptedStep(int64_t trial_id, const std::string& name);

  // The pace of the trial's newest attempt (the highest number) with two points of `name` or more;
  // nullopt when no attempt has two.
  StatusOr<std::optional<StepPace>> NewestOfTrial(int64_t trial_id, const std::string& name);

  // The pace of the newest attempt (leased last) with two points of `name` or more among the trials
  // of `trial`'s cell: its sweep's trials with its rung_label, its tokens per step (tokens / steps,
  // compared as a ratio), its cpus, gpus and world_size (`trial` itself included). nullopt when
  // none has two. Looks at attempts newest first and stops at the first with two points.
  StatusOr<std::optional<StepPace>> NewestOfCell(const TrialRecord& trial, const std::string& name);

  // The points a pace is measured over: an attempt's newest kPacePoints of a metric. A recent pace,
  // and a bounded read: the metrics' primary key (trial_id, name, step, attempt) gives a trial's
  // points of a metric from its newest step down, where a later attempt's points come first.
  static constexpr int kPacePoints = 64;

 private:
  // The attempt's pace over its newest kPacePoints points, or nullopt when it has fewer than two.
  StatusOr<std::optional<StepPace>> OfAttempt(int64_t trial_id, int64_t attempt, const std::string& name);

  Database& db_;
};

}  // namespace rung
