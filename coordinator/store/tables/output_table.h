// coordinator/store/tables/output_table.h
//
// What attempts report, written inside the caller's transaction: metric points, results
// (summaries, learned parameters, diagnostics) and log lines. The read side is metric_store.h.
//
// Idempotence: a metric point or a log line already stored under its key is left as it is; a
// result (summary, learned parameter element, diagnostic) written again under its key replaces the
// stored one (a summary keeps its step when the new one has none).
//
// Thread safety: as database.h (used inside a Store transaction only; tables.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "coordinator/store/clock.h"
#include "coordinator/store/store_types.h"
#include "core/common/status.h"

namespace rung {

class Database;

class OutputTable {
 public:
  explicit OutputTable(Database& db) : db_(db) {}

  // Stores the attempt's points (a replayed one only where the trial has no value of its name at
  // its step, from any attempt); returns how many were new.
  StatusOr<int64_t> InsertMetricPoints(int64_t trial_id, int64_t attempt, const std::vector<MetricPoint>& points);
  // Stores what the attempt reported as results.
  Status InsertResults(int64_t trial_id, int64_t attempt, const TrialResults& results);
  // Stores the lines of the attempt's batch `batch`, numbered 0, 1, ... in order, at `now`.
  Status InsertLogLines(int64_t trial_id, int64_t attempt, int64_t batch, const std::vector<LogLine>& lines,
                        Timestamp now);
  // The trial's points of `name` by step, each from the newest attempt that has one (metric_store.h).
  StatusOr<std::vector<CurvePoint>> Curve(int64_t trial_id, const std::string& name);
  // Every trial of the sweep with a summary `name`: trial id -> value (NaN where not finite).
  StatusOr<std::map<int64_t, double>> SummaryOfSweep(int64_t sweep_id, const std::string& name);
  // Whether any summary of the trial came from this attempt (its final record arrived).
  StatusOr<bool> HasSummaries(int64_t trial_id, int64_t attempt);

 private:
  Database& db_;
};

}  // namespace rung
