// coordinator/store/internal/results.h
//
// The writes of what attempts report, shared by the managers: metric points (MetricStore's
// AppendMetrics, TrialLifecycle's ReportBatch), results (ReportBatch and the end of a successful
// attempt) and log lines. They run inside the caller's transaction and never commit.
//
// Idempotence: a metric point or a log line already stored under its key is left as it is; a
// result (summary, learned parameter element, diagnostic) written again under its key replaces the
// stored one (a summary keeps its step when the new one has none).
//
// Thread safety: as database.h (the caller holds the Store's mutex).
#pragma once

#include <cstdint>
#include <vector>

#include "coordinator/store/database.h"
#include "coordinator/store/store_types.h"

namespace rung::store_internal {

// Stores the attempt's points; returns how many were new.
StatusOr<int64_t> InsertMetricPoints(Database& db, int64_t trial_id, int64_t attempt,
                                     const std::vector<MetricPoint>& points);

// Stores what the attempt reported as results.
Status InsertResults(Database& db, int64_t trial_id, int64_t attempt, const TrialResults& results);

// Stores the lines of the attempt's batch `batch`, numbered 0, 1, ... in order, at `now`.
Status InsertLogLines(Database& db, int64_t trial_id, int64_t attempt, int64_t batch,
                      const std::vector<LogLine>& lines, Timestamp now);

}  // namespace rung::store_internal
