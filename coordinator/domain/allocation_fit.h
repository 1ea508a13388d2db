// coordinator/domain/allocation_fit.h
//
// Which trials fit in what is left of a worker's allocation. A worker that knows when it stops by
// itself (WorkerInfo::stops_at: its SLURM allocation's end less the margin it keeps to checkpoint)
// is leased only a trial whose next checkpoint it can reach before then, so that what it trains is
// kept; a trial that does not fit stays PENDING for other workers (docs/design.md, "Workers that
// know their allocation"). A worker without stops_at leases as before: none of this applies.
//
// The estimate of one trial, at the transaction's time `now`:
//   progress          where it resumes: the later of the newest step its last PREEMPTED attempt stored
//                     (a preempted trainer checkpoints where it stopped) and, with checkpoint_every
//                     e > 0, the last multiple of e at or below its newest stored step of train_loss
//                     (an attempt that went STALE or FAILED checkpointed no later); 0 when none
//   next checkpoint   with train.checkpoint_every = e > 0: min(steps, (progress / e + 1) x e); with
//                     e = 0 (a checkpoint only on a signal and at the end): steps, the trial's last
//   steps needed      next checkpoint - progress
//   seconds per step  the first of these that exists:
//                     (a) the trial's own: its newest attempt with two train_loss points or more,
//                         over its newest PaceTable::kPacePoints of them, (wall_time at the last -
//                         at the first) / (last step - first step) (pace_table.h: wall_time is the
//                         trainer's cumulative seconds of training, so within one attempt the
//                         difference is that attempt's pace);
//                     (b) its cell's: the same of the newest attempt (leased last) with two points
//                         among the sweep's trials with the trial's rung_label, tokens per step
//                         (trials.tokens / trials.steps), cpus, gpus and world_size;
//                     (c) a CPU trial (gpus 0): the uncalibrated rate of `rung plan`
//                         (sweeps/spec/trial_work.h), kUncalibratedFlopsPerSec x threads /
//                         kUncalibratedThreads with threads = resources.cpus x world_size (trials.cpus),
//                         for TrainingFlopsPerToken(config) x tokens per step FLOPs a step;
//                     (d) a GPU trial with nothing measured: none. The trial has no estimate.
//                     A measured pace whose seconds are not > 0 (a worker's clock that did not move)
//                     counts as not measured.
//   start             the start of the attempt whose pace was taken (a or b): its started_at -
//                     leased_at, from its lease to its trainer's first record, once its data, model
//                     and checkpoint are loaded; else (c, or an attempt that never reported its start)
//                     kStartAllowance
//   seconds           start + steps needed x seconds per step
// A trial fits to its own checkpoint when now + seconds <= stops_at. Otherwise it fits to the
// checkpoint the worker's own stop writes (at stops_at every trainer checkpoints and its trial is
// reported PREEMPTED, so nothing it trained is lost) when the time left holds its start and at least
// kTrainingPerStart times as much training: a trial that checkpoints only on a signal and at its end
// (checkpoint_every 0), or whose checkpoints lie further apart than any allocation, still advances,
// one allocation at a time. A look takes the first candidate that fits to its own checkpoint, else
// the first that fits to the stop's. (A gang's rank is reserved only for a trial that fits to its own
// checkpoint: one member's stop would preempt every rank; gang_leases.h.) A trial without an estimate (d), or whose config the
// coordinator cannot read as a trial config (its trainer will say what is wrong), fits to its own
// while now < stops_at. Nothing fits a worker at or past its stops_at.
//
// The work of one look is bounded: at most kCandidatesPerLook leasable trials are estimated, each
// cell's pace is read once per look (an AllocationFit lives for one look), and it all runs in the
// caller's transaction.
//
// Example (TrialLifecycle::LeaseNextTrialIn, for a worker with stops_at):
//   RUNG_ASSIGN_OR_RETURN(std::optional<TrialRecord> next,
//                         domain::NextLeasableBefore(tables, free_cpus, free_gpus, worker_id, *stops_at));
//
// Thread safety: as tables.h (inside the caller's transaction; an AllocationFit is one look's).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "coordinator/store/clock.h"
#include "coordinator/store/store_types.h"
#include "coordinator/store/tables/tables.h"
#include "core/common/status.h"

namespace rung::domain {

// What a trial takes besides its steps (the trainer's start, its data, its model) where nothing
// measured it.
inline constexpr std::chrono::seconds kStartAllowance{30};
// The leasable trials one look estimates at most (in lease order), for a worker with stops_at.
inline constexpr int64_t kCandidatesPerLook = 64;
// A trial that cannot reach its own next checkpoint is leased for the stop's checkpoint only when the
// time left trains it at least this many times as long as it takes to start.
inline constexpr double kTrainingPerStart = 3;

// How a trial fits before a worker's stop (see above).
enum class Fit {
  kNo,
  kItsCheckpoint,       // it reaches its own next checkpoint (or has no estimate)
  kTheStopsCheckpoint,  // only the checkpoint the worker's stop writes saves what it trains
};

// Where a trial's seconds per step came from (see above).
enum class PaceSource { kNone, kTrial, kCell, kUncalibrated };

// The estimate of one trial (see above).
struct FitEstimate {
  int64_t progress = 0;
  int64_t next_checkpoint = 0;
  PaceSource source = PaceSource::kNone;
  double seconds_per_step = 0;      // with a source
  double start_seconds = 0;         // with a source: measured, or kStartAllowance
  std::optional<double> seconds;    // start_seconds + steps needed x seconds_per_step; nullopt: no estimate
};

// The fits of one look for a worker that stops at `stops_at`.
class AllocationFit {
 public:
  // REQUIRES: `tables` outlives the AllocationFit (one look, one transaction).
  AllocationFit(Tables& tables, Timestamp stops_at) : tables_(tables), stops_at_(stops_at) {}

  // The estimate of `trial` (a whole record or a header: a header's config is read from the store).
  // Errors: the store's.
  StatusOr<FitEstimate> Estimate(const TrialRecord& trial);
  // How `trial` fits before stops_at (see above).
  StatusOr<Fit> Fits(const TrialRecord& trial);

 private:
  // A trial's cell: sweep, rung_label, tokens per step (as a reduced fraction), cpus, gpus, world_size.
  using CellKey = std::tuple<int64_t, std::string, int64_t, int64_t, int64_t, int64_t, int64_t>;

  // What an estimate takes from a measured attempt.
  struct MeasuredPace {
    double seconds_per_step = 0;
    std::optional<double> start_seconds;
  };
  // A pace's seconds per step and start, or nullopt when it counts as not measured.
  static std::optional<MeasuredPace> Measured(const std::optional<StepPace>& pace);
  // The cell's measured pace (read once per look).
  StatusOr<std::optional<MeasuredPace>> CellPace(const TrialRecord& trial);

  Tables& tables_;
  const Timestamp stops_at_;
  std::map<CellKey, std::optional<MeasuredPace>> cell_paces_;
};

// Of the kCandidatesPerLook leasable trials in TrialTable::Leasable's order (what
// TrialTable::NextLeasable would lease, then the next ones), the first that fits a worker stopping at
// `stops_at` to its own checkpoint, else the first that fits to the stop's, as a header; nullopt when
// none of them fits. Errors: the store's.
StatusOr<std::optional<TrialRecord>> NextLeasableBefore(Tables& tables, int64_t free_cpus, int64_t free_gpus,
                                                        const std::string& worker_id, Timestamp stops_at);

}  // namespace rung::domain
