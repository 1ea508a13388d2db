// coordinator/server/results_query.h
//
// UserService.QueryResults: a sweep's results table. Trials are grouped by keys, one value of a
// metric stands for each trial, and each group gets the aggregations asked for (mean, std, min,
// max, median, count over the trials that have a value; typically over seeds; NaN where undefined:
// std of fewer than two values, any of none) and the paired same-seed difference against the
// baseline.
//
// Keys (group_by and filters) are resolved per trial, first match wins:
//   trial        the trial id (rows ordered by trial index): one row per trial
//   rung_label   the ladder rung's label (rows ordered by rung, not by label text)
//   rung         the rung index
//   seed         the trial's seed
//   a sweep axis as the spec names it ("position.variant"): the cell's assignment
//   any dotted key of the resolved trial config ("model.mlp", "train.lr")
// A key no trial has is INVALID_ARGUMENT, naming it and listing the valid keys; a trial that lacks
// a key some other trial has is grouped under null. Without group_by keys there is one row per
// trial, labelled by the keys trial, rung_label and every sweep axis (sorted; the response's
// group_by names them).
//
// The value of a trial (MetricSummary): FINAL, the metric among the summaries of a SUCCEEDED trial
// (the trainer's final record); BEST, the best point of its curve by the sweep's goal; LAST, its
// newest point. Non-finite values count as no value.
//
// Paired differences: a trial's baseline twin is the trial the spec's baseline selects
// ({"position.variant": "rope"}) with the same rung and the same value of every other sweep axis,
// seed included. Each trial of a group with a value and a twin with a value gives value - twin's
// value; a row carries their mean, sample sd and count (a baseline trial pairs with itself: 0).
//
// Example:
//   StatusOr<v1::QueryResultsResponse> table = QueryResults(coordinator, request);
//
// Thread safety: reads the store (thread-safe); no state of its own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "coordinator/domain/coordinator.h"
#include "proto/rung.pb.h"

namespace rung::server {

// The value that stands for each trial of `trials` (trial id -> value; trials without a finite
// value are absent), as MetricSummary says. Reads curves for BEST and LAST.
StatusOr<std::map<int64_t, double>> TrialValues(Coordinator& coordinator, const SweepRecord& sweep,
                                                const std::vector<TrialResult>& trials, const std::string& metric,
                                                v1::MetricSummary summary);

// INVALID_ARGUMENT when no trial of a sweep that reported anything reported `metric` (listing the
// names it did report); OK when it did or when nothing was reported yet.
Status CheckMetricName(Coordinator& coordinator, int64_t sweep_id, const std::string& metric,
                       const std::map<int64_t, double>& values);

// The whole QueryResults call. Errors: NOT_FOUND (sweep), INVALID_ARGUMENT (sweep_id missing, an
// unknown key, a filter value that is not JSON, an unknown metric).
StatusOr<v1::QueryResultsResponse> QueryResults(Coordinator& coordinator, const v1::QueryResultsRequest& request);

}  // namespace rung::server
