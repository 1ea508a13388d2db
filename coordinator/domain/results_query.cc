// coordinator/domain/results_query.cc
#include "coordinator/domain/results_query.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <set>

#include "coordinator/store/sweep_results.h"
#include "core/config/config_error.h"
#include "sweeps/fit/student_t.h"
#include "sweeps/spec/json_path.h"
#include "sweeps/spec/sweep_axes.h"

namespace rung {
namespace {

using nlohmann::json;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// A key's value for one trial: what is shown, and what rows are ordered by.
struct KeyValue {
  json shown;  // null: the trial has no such key
  json order;
};

std::optional<KeyValue> ResolveKey(const TrialRecord& trial, const std::string& key) {
  const TrialCell& cell = trial.cell;
  if (key == "trial") return KeyValue{trial.id, trial.trial_index};
  if (key == "rung_label") return KeyValue{cell.rung_label, json::array({cell.rung, cell.rung_label})};
  if (key == "rung") return KeyValue{cell.rung, cell.rung};
  if (key == "seed") return KeyValue{cell.seed, cell.seed};
  if (cell.assignments.is_object() && cell.assignments.contains(key)) {
    return KeyValue{cell.assignments.at(key), cell.assignments.at(key)};
  }
  if (const json* value = FindPath(cell.config, key)) return KeyValue{*value, *value};
  return std::nullopt;
}

// Every dotted leaf path of a JSON object, sorted.
void LeafPaths(const json& value, const std::string& prefix, std::set<std::string>* paths) {
  if (!value.is_object()) {
    if (!prefix.empty()) paths->insert(prefix);
    return;
  }
  for (auto item = value.begin(); item != value.end(); ++item) {
    LeafPaths(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), paths);
  }
}

std::string Join(const std::set<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// INVALID_ARGUMENT for a key no trial has, listing the keys there are.
Status CheckKeys(const std::vector<TrialResult>& trials, const std::vector<std::string>& keys, const char* field) {
  for (const std::string& key : keys) {
    bool found = false;
    for (const TrialResult& trial : trials) {
      if (ResolveKey(trial.trial, key)) {
        found = true;
        break;
      }
    }
    if (found || trials.empty()) continue;
    std::set<std::string> axes, config;
    for (const TrialResult& trial : trials) {
      if (trial.trial.cell.assignments.is_object()) {
        for (auto item = trial.trial.cell.assignments.begin(); item != trial.trial.cell.assignments.end(); ++item) {
          axes.insert(item.key());
        }
      }
    }
    LeafPaths(trials.front().trial.cell.config, "", &config);
    std::vector<std::string> candidates = {"trial", "rung_label", "rung", "seed"};
    candidates.insert(candidates.end(), axes.begin(), axes.end());
    candidates.insert(candidates.end(), config.begin(), config.end());
    const std::string nearest = NearestKey(key, candidates);
    return Status::InvalidArgument(std::string(field) + ": unknown key '" + key + "'" +
                                   (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)") +
                                   ". Valid keys: trial, rung_label, rung, seed; the sweep's axes: " +
                                   (axes.empty() ? "(none)" : Join(axes)) +
                                   "; any dotted key of the trial config: " + Join(config));
  }
  return Status::Ok();
}

struct Group {
  std::vector<json> shown;
  std::vector<const TrialResult*> trials;
  std::vector<double> values;
  std::vector<double> differences;
};

double Mean(const std::vector<double>& values) {
  if (values.empty()) return kNan;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

// Sample standard deviation: NaN with fewer than two values (undefined).
double SampleSd(const std::vector<double>& values) {
  if (values.size() < 2) return kNan;
  const double mean = Mean(values);
  double sum = 0;
  for (double value : values) sum += (value - mean) * (value - mean);
  return std::sqrt(sum / static_cast<double>(values.size() - 1));
}

double Aggregate(std::vector<double> values, Aggregation aggregation) {
  switch (aggregation) {
    case Aggregation::kMean: return Mean(values);
    case Aggregation::kStd: return SampleSd(values);
    case Aggregation::kMin: return values.empty() ? kNan : *std::min_element(values.begin(), values.end());
    case Aggregation::kMax: return values.empty() ? kNan : *std::max_element(values.begin(), values.end());
    case Aggregation::kMedian: {
      if (values.empty()) return kNan;
      std::sort(values.begin(), values.end());
      const size_t middle = values.size() / 2;
      return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0;
    }
    case Aggregation::kCount: return static_cast<double>(values.size());
  }
  return kNan;
}

// The cell of a trial with the baseline's keys left out, with its rung: equal for a trial and its
// baseline twin.
std::string TwinKey(const TrialRecord& trial, const json& baseline) {
  json rest = trial.cell.assignments.is_object() ? trial.cell.assignments : json::object();
  if (baseline.is_object()) {
    for (auto item = baseline.begin(); item != baseline.end(); ++item) rest.erase(item.key());
  }
  rest.erase(kLabelAxisKey);  // a label names the cell's arm, as the baseline's keys do
  rest["seed"] = trial.cell.seed;
  return std::to_string(trial.cell.rung) + "|" + rest.dump();
}

// The keys that label a row of one trial: trial, rung_label and the sweep's axes (sorted).
std::vector<std::string> TrialLabels(const std::vector<TrialResult>& trials) {
  std::set<std::string> axes;
  for (const TrialResult& trial : trials) {
    const json& assignments = trial.trial.cell.assignments;
    if (!assignments.is_object()) continue;
    for (auto item = assignments.begin(); item != assignments.end(); ++item) axes.insert(item.key());
  }
  std::vector<std::string> keys = {"trial", "rung_label"};
  keys.insert(keys.end(), axes.begin(), axes.end());
  return keys;
}

}  // namespace

StatusOr<std::map<int64_t, double>> TrialValues(Coordinator& coordinator, const SweepRecord& sweep,
                                                const std::vector<TrialResult>& trials, const std::string& metric,
                                                MetricSummary summary) {
  std::map<int64_t, double> values;
  if (summary == MetricSummary::kFinal) {
    for (const TrialResult& trial : trials) {
      if (trial.trial.state != TrialState::kSucceeded) continue;
      auto found = trial.summaries.find(metric);
      if (found != trial.summaries.end() && std::isfinite(found->second)) values[trial.trial.id] = found->second;
    }
    return values;
  }
  RUNG_ASSIGN_OR_RETURN(auto curves, coordinator.results().Curves(sweep.id, metric));
  const bool maximize = sweep.metric.goal == "maximize";
  for (const auto& [trial_id, curve] : curves) {
    std::optional<double> chosen;
    for (const StepValue& point : curve) {
      if (!std::isfinite(point.value)) continue;
      if (summary == MetricSummary::kLast || !chosen || (maximize ? point.value > *chosen : point.value < *chosen)) {
        chosen = point.value;
      }
    }
    if (summary == MetricSummary::kLast && !curve.empty() && !std::isfinite(curve.back().value)) chosen.reset();
    if (chosen) values[trial_id] = *chosen;
  }
  return values;
}

Status CheckMetricName(Coordinator& coordinator, int64_t sweep_id, const std::string& metric,
                       const std::map<int64_t, double>& values) {
  if (!values.empty()) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(std::vector<std::string> names, coordinator.results().MetricNames(sweep_id));
  if (names.empty() || std::find(names.begin(), names.end(), metric) != names.end()) return Status::Ok();
  return Status::InvalidArgument("metric: no trial of sweep " + std::to_string(sweep_id) + " reported '" + metric +
                                 "'; its trials reported: " + Join({names.begin(), names.end()}));
}

StatusOr<ResultsTable> QueryResults(Coordinator& coordinator, const ResultsQuery& query) {
  if (query.sweep_id <= 0) return Status::InvalidArgument("QueryResultsRequest.sweep_id is required (a positive id)");
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, coordinator.sweeps().Get(query.sweep_id));
  const auto goes_on = [&query] { return query.keep_going ? query.keep_going() : Status::Ok(); };
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialResult> all, coordinator.results().Trials(query.sweep_id, -1, -1, ProvenanceRead::kSkip));
  RUNG_RETURN_IF_ERROR(goes_on());

  std::vector<std::string> group_by = query.group_by;
  RUNG_RETURN_IF_ERROR(CheckKeys(all, group_by, "group_by"));
  if (group_by.empty()) group_by = TrialLabels(all);
  std::vector<std::string> filter_keys;
  for (const ResultFilter& filter : query.filters) filter_keys.push_back(filter.key);
  RUNG_RETURN_IF_ERROR(CheckKeys(all, filter_keys, "filters"));
  std::vector<std::string> against_keys;
  for (const ResultFilter& filter : query.against) against_keys.push_back(filter.key);
  RUNG_RETURN_IF_ERROR(CheckKeys(all, against_keys, "against"));
  RUNG_RETURN_IF_ERROR(CheckKeys(all, query.pair_on, "pair_on"));
  if (!(query.level > 0.0 && query.level < 1.0)) {
    return Status::InvalidArgument("level: the paired intervals' level must lie in (0, 1), got " +
                                   std::to_string(query.level));
  }

  std::vector<const TrialResult*> trials;
  for (const TrialResult& trial : all) {
    // Every key filtered holds one of the values given for it.
    std::map<std::string, bool> held;
    for (const ResultFilter& filter : query.filters) {
      std::optional<KeyValue> value = ResolveKey(trial.trial, filter.key);
      held[filter.key] = held[filter.key] || (value && value->shown == filter.value);
    }
    if (std::all_of(held.begin(), held.end(), [](const auto& key) { return key.second; })) trials.push_back(&trial);
  }

  const std::string metric = query.metric.empty() ? sweep.metric.name : query.metric;
  // Values of every trial of the sweep: a baseline twin may be filtered out of the table.
  RUNG_ASSIGN_OR_RETURN(auto values, TrialValues(coordinator, sweep, all, metric, query.summary));
  RUNG_RETURN_IF_ERROR(goes_on());
  RUNG_RETURN_IF_ERROR(CheckMetricName(coordinator, sweep.id, metric, values));
  // The reference trials, by the key a trial shares with its twin.
  json reference = sweep.baseline;
  if (!query.against.empty()) {
    reference = json::object();
    for (const ResultFilter& filter : query.against) reference[filter.key] = filter.value;
  }
  const auto is_reference = [&](const TrialResult& trial) {
    if (query.against.empty()) return MatchesBaseline(trial.trial.cell.config, sweep.baseline);
    for (const ResultFilter& filter : query.against) {
      std::optional<KeyValue> value = ResolveKey(trial.trial, filter.key);
      if (!value || value->shown != filter.value) return false;
    }
    return true;
  };
  const auto pair_key = [&](const TrialResult& trial) {
    if (query.pair_on.empty()) return TwinKey(trial.trial, reference);
    json shared = json::array();
    for (const std::string& key : query.pair_on) {
      std::optional<KeyValue> value = ResolveKey(trial.trial, key);
      shared.push_back(value ? value->shown : json());
    }
    return std::to_string(trial.trial.cell.rung) + "|" + shared.dump();
  };
  std::map<std::string, int64_t> twins;  // the reference trials, by their pair key
  const bool chosen = !query.against.empty() || !query.pair_on.empty();
  for (const TrialResult& trial : all) {
    // A reference without a value (failed, cancelled, removed by a resubmission) pairs with nothing.
    if (!is_reference(trial) || (chosen && !values.count(trial.trial.id))) continue;
    const auto [slot, added] = twins.emplace(pair_key(trial), trial.trial.id);
    if (!added && chosen) {
      return Status::InvalidArgument(
          (query.against.empty() ? "the baseline " : "against ") + reference.dump() + " selects trials " +
          std::to_string(slot->second) + " and " + std::to_string(trial.trial.id) +
          " with the same rung and pair_on values: add a key that tells them apart to pair_on (seed) or to against");
    }
    if (!added) slot->second = trial.trial.id;  // the baseline twin rule: the last such trial
  }
  if (!query.against.empty() && twins.empty()) {
    return Status::InvalidArgument("against " + reference.dump() + " matches no trial of sweep " +
                                   std::to_string(sweep.id) + " with a value of " + metric);
  }

  std::map<std::vector<json>, Group> groups;  // by the order values
  for (const TrialResult* kept : trials) {
    const TrialResult& trial = *kept;
    std::vector<json> order, shown;
    for (const std::string& key : group_by) {
      std::optional<KeyValue> value = ResolveKey(trial.trial, key);
      order.push_back(value ? value->order : json());
      shown.push_back(value ? value->shown : json());
    }
    Group& group = groups[order];
    group.shown = shown;
    group.trials.push_back(&trial);
    auto value = values.find(trial.trial.id);
    if (value == values.end()) continue;
    group.values.push_back(value->second);
    auto twin = twins.find(pair_key(trial));
    if (twin == twins.end()) continue;
    auto twin_value = values.find(twin->second);
    if (twin_value != values.end()) group.differences.push_back(value->second - twin_value->second);
  }

  ResultsTable table;
  table.group_by = group_by;
  table.aggregations = query.aggregations;
  if (table.aggregations.empty()) table.aggregations = {Aggregation::kMean, Aggregation::kStd, Aggregation::kCount};
  table.metric = metric;
  table.baseline = reference;
  table.pair_on = query.pair_on;
  table.level = query.level;
  table.summary = query.summary;
  for (const auto& [order, group] : groups) {
    ResultRow& row = table.rows.emplace_back();
    row.group_values = group.shown;
    for (Aggregation aggregation : table.aggregations) row.values.push_back(Aggregate(group.values, aggregation));
    row.trials = static_cast<int64_t>(group.trials.size());
    double flops = 0, tokens = 0;
    for (const TrialResult* trial : group.trials) {
      flops += trial->trial.cell.flops;
      tokens += static_cast<double>(trial->trial.cell.tokens);
      row.trial_ids.push_back(trial->trial.id);
    }
    row.flops = flops / static_cast<double>(group.trials.size());
    row.tokens = static_cast<int64_t>(std::llround(tokens / static_cast<double>(group.trials.size())));
    if (!group.differences.empty()) {
      row.paired_difference_mean = Mean(group.differences);
      // No sd of a single pair.
      if (group.differences.size() >= 2) {
        row.paired_difference_sd = SampleSd(group.differences);
        const double pairs = static_cast<double>(group.differences.size());
        const double half = fit::StudentTQuantile(0.5 + query.level / 2.0, pairs - 1.0) * *row.paired_difference_sd /
                            std::sqrt(pairs);
        row.paired_low = *row.paired_difference_mean - half;
        row.paired_high = *row.paired_difference_mean + half;
      }
    }
    row.pairs = static_cast<int64_t>(group.differences.size());
  }
  return table;
}

}  // namespace rung
