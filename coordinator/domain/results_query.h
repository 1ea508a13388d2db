// coordinator/domain/results_query.h
//
// A sweep's results table (what UserService.QueryResults answers; the service converts). Trials are grouped by keys, one value of a
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
// value; a row carries their mean, sample sd and count (a baseline trial pairs with itself: 0), and
// from two pairs on the Student t interval of the mean difference at `level` (mean +- t_{n-1} sd /
// sqrt n: exact when the pairs' differences are independent draws of one normal law).
// A query may choose the reference instead: `against` selects the reference trials by keys (as
// filters do: {"label": "yarn-tuned"}) in place of the spec's baseline, and `pair_on` names the keys
// a trial and its twin share (with the rung) in place of "every other sweep axis": a study whose arms
// differ in several keys (a zip) pairs each arm's trial with the reference trial of the same seed by
// pair_on {"seed"}. Two reference trials with the same rung and pair_on values are ambiguous and
// refused.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(ResultsTable table, QueryResults(coordinator, {sweep_id, {"rung_label"}}));
//
// Thread safety: reads the store (thread-safe); no state of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/domain/coordinator.h"
#include "coordinator/store/sweep_results.h"
#include "core/common/status.h"

namespace rung {

// Which value stands for a trial (see above).
enum class MetricSummary { kFinal, kBest, kLast };
enum class Aggregation { kMean, kStd, kMin, kMax, kMedian, kCount };

struct ResultFilter {
  std::string key;
  nlohmann::json value;  // a trial is kept when its key's value equals this (or another filter's on that key)
};

struct ResultsQuery {
  int64_t sweep_id = 0;
  std::vector<std::string> group_by;  // empty: one row per trial
  std::vector<ResultFilter> filters;
  std::string metric;  // "": the sweep's metric
  MetricSummary summary = MetricSummary::kFinal;
  std::vector<Aggregation> aggregations;  // empty: mean, std, count
  std::vector<ResultFilter> against;      // the reference trials; empty: the spec's baseline
  std::vector<std::string> pair_on;       // the keys a twin shares; empty: every other sweep axis and seed
  double level = 0.95;                    // of the paired intervals, in (0, 1)
  // Asked between the query's reads and computations (null: never): a non-OK answer (the caller
  // went away, its deadline passed) stops the query and is returned.
  std::function<Status()> keep_going;
};

struct ResultRow {
  std::vector<nlohmann::json> group_values;  // one per group_by key (null: the trials lack it)
  std::vector<double> values;                // one per aggregation
  int64_t trials = 0;
  std::vector<int64_t> trial_ids;
  double flops = 0;  // mean over the row's trials
  int64_t tokens = 0;
  std::optional<double> paired_difference_mean;
  std::optional<double> paired_difference_sd;  // from two pairs on
  std::optional<double> paired_low;            // the t interval of the mean difference, from two pairs on
  std::optional<double> paired_high;
  int64_t pairs = 0;
};

struct ResultsTable {
  std::vector<std::string> group_by;
  std::vector<Aggregation> aggregations;
  std::string metric;
  nlohmann::json baseline;               // the reference selector: the spec's baseline, or the query's against
  std::vector<std::string> pair_on;      // as queried (empty: the baseline twin rule)
  double level = 0.95;
  MetricSummary summary = MetricSummary::kFinal;
  std::vector<ResultRow> rows;
};


// The value that stands for each trial of `trials` (trial id -> value; trials without a finite
// value are absent), as MetricSummary says. Reads curves for BEST and LAST.
StatusOr<std::map<int64_t, double>> TrialValues(Coordinator& coordinator, const SweepRecord& sweep,
                                                const std::vector<TrialResult>& trials, const std::string& metric,
                                                MetricSummary summary);

// INVALID_ARGUMENT when no trial of a sweep that reported anything reported `metric` (listing the
// names it did report); OK when it did or when nothing was reported yet.
Status CheckMetricName(Coordinator& coordinator, int64_t sweep_id, const std::string& metric,
                       const std::map<int64_t, double>& values);

// The table. Errors: NOT_FOUND (sweep), INVALID_ARGUMENT (sweep_id missing, an unknown key, an
// unknown metric, a level outside (0, 1), `against` matching no trial or two for one pair).
StatusOr<ResultsTable> QueryResults(Coordinator& coordinator, const ResultsQuery& query);

}  // namespace rung
