#include "coordinator/domain/sweep_fits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/common/csv_field.h"
#include "sweeps/fit/isoflop_profile.h"
#include "sweeps/fit/law_report.h"
#include "sweeps/fit/report_format.h"
#include "sweeps/spec/json_path.h"
#include "sweeps/spec/ladder_variant.h"
#include "sweeps/tune/lr_search.h"

namespace rung {
namespace {

using nlohmann::json;


std::string ExactNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// Every sweep axis of the trials but seed and the tuned key, sorted; position.variant when none is left.
std::vector<std::string> DefaultVariantKeys(const std::vector<TrialResult>& trials, const std::string& tuned_key) {
  std::vector<const json*> assignments;
  for (const TrialResult& trial : trials) assignments.push_back(&trial.trial.cell.assignments);
  return ::rung::DefaultVariantKeys(assignments, tuned_key);
}

const json* KeyOf(const TrialRecord& trial, const std::string& key) {
  return VariantKeyValue(trial.cell.assignments, trial.cell.config, key);
}

std::string VariantName(const TrialRecord& trial, const std::vector<std::string>& keys) {
  return LadderVariantName(trial.cell.assignments, trial.cell.config, keys);
}

// A tuned sweep's choice of runs: per tuning cell (by its keys' JSON) the grid index whose runs stand
// for its ladder points, and how that index was found.
struct TunedChoice {
  const TuneSpec* tune = nullptr;
  std::vector<std::string> axis_keys;
  std::string policy;                                      // "best" or "value=X"
  std::map<std::string, const TuningCellReport*> cells;    // by cell JSON
  std::optional<int64_t> fixed_index;                      // value=X
};

const char* TunedStatus(const TuningCellReport& cell) {
  switch (cell.status) {
    case CellStatus::kBracketed: return "bracketed";
    case CellStatus::kExhausted: return "unbracketed";
    case CellStatus::kExtrapolated: return "extrapolated";
    case CellStatus::kFromSweep: return "from_sweep";
    default: return "unfinished";
  }
}

}  // namespace

StatusOr<SweepLadder> BuildLadder(Coordinator& coordinator, const SweepRecord& sweep, const std::string& metric,
                                  MetricSummary summary, std::vector<std::string>* variant_keys,
                                  std::optional<double> tuned_value, fit::ComputeCount count) {
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialResult> trials, coordinator.results().Trials(sweep.id, -1, -1, ProvenanceRead::kSkip));
  // A tuned sweep: its search's cells say which runs stand for a ladder point.
  std::optional<TuningPlan> plan;
  std::shared_ptr<const ExpandedSweep> spec;
  TunedChoice choice;
  if (!sweep.tuning.empty()) {
    RUNG_ASSIGN_OR_RETURN(spec, coordinator.tuner().SpecOf(sweep));
    RUNG_ASSIGN_OR_RETURN(plan, coordinator.tuner().Plan(sweep.id));
    choice.tune = &spec->spec.tune;
    choice.axis_keys = spec->spec.axes.Keys();
    for (const TuningCellReport& cell : plan->cells) choice.cells[cell.cell.dump()] = &cell;
    choice.policy = "best";
    if (tuned_value) {
      choice.fixed_index = choice.tune->NearestIndex(*tuned_value);
      choice.policy = "value=" + ExactNumber(choice.tune->ValueAt(*choice.fixed_index));
    }
  }
  if (variant_keys->empty()) {
    *variant_keys = DefaultVariantKeys(trials, choice.tune != nullptr ? choice.tune->key : "");
  }
  for (const std::string& key : *variant_keys) {
    bool found = false;
    for (const TrialResult& trial : trials) found = found || KeyOf(trial.trial, key) != nullptr;
    if (!found && !trials.empty()) {
      return Status::InvalidArgument("variant_keys: no trial of sweep " + sweep.name + " has the key '" + key + "'");
    }
  }
  RUNG_ASSIGN_OR_RETURN(auto values, TrialValues(coordinator, sweep, trials, metric, summary));
  RUNG_RETURN_IF_ERROR(CheckMetricName(coordinator, sweep.id, metric, values));

  SweepLadder result;
  result.ladder.source = "sweep " + sweep.name;
  if (choice.tune != nullptr) {
    result.tuned_key = choice.tune->key;
    result.tuned_policy = choice.policy;
  }
  std::map<std::string, std::vector<std::pair<double, double>>> law_points;  // variant -> (N, best value)
  std::set<std::pair<std::string, std::string>> tuned_seen;
  bool all_seconds = true;
  for (const TrialResult& trial : trials) {
    const std::string variant = VariantName(trial.trial, *variant_keys);
    result.variants.insert(variant);
    if (MatchesBaseline(trial.trial.cell.config, sweep.baseline)) result.baseline_variants.insert(variant);
    if (choice.tune != nullptr) {
      // Only the runs at the cell's chosen value stand for the point.
      const json& assignments = trial.trial.cell.assignments;
      auto cell = choice.cells.find(
          TuningCellOf(*choice.tune, choice.axis_keys, trial.trial.cell.rung_label, assignments).dump());
      if (!assignments.contains(choice.tune->key) || !assignments[choice.tune->key].is_number() ||
          cell == choice.cells.end()) {
        continue;
      }
      const std::optional<int64_t> chosen = choice.fixed_index ? choice.fixed_index : cell->second->best_index;
      if (!chosen || (!choice.fixed_index && !cell->second->closed())) {
        ++result.unfinished;
        continue;
      }
      if (choice.tune->NearestIndex(assignments[choice.tune->key].get<double>()) != *chosen) continue;
      const std::string status = choice.fixed_index ? "fixed" : TunedStatus(*cell->second);
      if (tuned_seen.insert({variant, trial.trial.cell.rung_label}).second) {
        result.tuned.push_back({variant, trial.trial.cell.rung_label, choice.tune->ValueAt(*chosen), status});
        if (status == "bracketed" || status == "unbracketed") {
          law_points[variant].emplace_back(cell->second->n_total, choice.tune->ValueAt(*chosen));
        }
      }
    }
    auto value = values.find(trial.trial.id);
    if (trial.trial.state != TrialState::kSucceeded || value == values.end()) {
      ++result.unfinished;
      continue;
    }
    fit::LadderRun run;
    run.variant = variant;
    run.label = trial.trial.cell.rung_label;
    run.compute = trial.trial.cell.flops;
    if (count != fit::ComputeCount::kNonembedding) {
      StatusOr<double> compute = fit::TrainingCompute(count, trial.trial.cell.config, trial.trial.cell.tokens);
      if (!compute.ok()) {
        return Status::Internal("trial " + std::to_string(trial.trial.id) + "'s stored config does not give its " +
                                fit::ComputeCountName(count) + " FLOP count: " + compute.status().message());
      }
      run.compute = *compute;
    }
    run.loss = value->second;
    run.seed = trial.trial.cell.seed;
    if (trial.trial.cell.tokens > 0) {
      // N in the compute count's own terms: compute = 6 N D.
      run.tokens = static_cast<double>(trial.trial.cell.tokens);
      run.parameters = run.compute / (6.0 * *run.tokens);
    }
    auto seconds = trial.summaries.find("wall_sec");
    if (seconds != trial.summaries.end() && std::isfinite(seconds->second) && seconds->second > 0) {
      run.seconds = seconds->second;
    } else {
      all_seconds = false;
    }
    run.origin = "trial " + std::to_string(trial.trial.id);
    result.ladder.runs.push_back(run);
    result.points.push_back({trial.trial.id, run.variant, run.label, run.compute, run.loss, *run.seed});
  }
  if (!all_seconds) {
    for (fit::LadderRun& run : result.ladder.runs) run.seconds.reset();
  }
  for (const auto& [variant, points] : law_points) {
    if (auto law = FitValueLaw(points)) {
      result.tuned_laws.push_back({variant, law->coefficient, law->exponent, static_cast<int>(points.size())});
    }
  }
  if (result.baseline_variants.size() == 1) result.baseline = *result.baseline_variants.begin();
  return result;
}

namespace {

// FAILED_PRECONDITION unless the baseline has 2 ladder points and another variant has one.
Status CheckEnoughPoints(const SweepLadder& ladder, const std::string& baseline) {
  std::map<std::string, std::set<std::string>> labels;  // variant -> labels with a finished run
  for (const fit::LadderRun& run : ladder.ladder.runs) labels[run.variant].insert(run.label);
  const std::string unfinished =
      std::to_string(ladder.unfinished) + " trial(s) of the sweep are not finished or have no value";
  const size_t baseline_points = labels.count(baseline) ? labels[baseline].size() : 0;
  if (baseline_points < 2) {
    return Status::FailedPrecondition("too few finished ladder points: the baseline '" + baseline + "' has " +
                                      std::to_string(baseline_points) +
                                      " finished ladder point(s) and a fit needs at least 2; " + unfinished);
  }
  if (labels.size() < 2) {
    return Status::FailedPrecondition("too few finished ladder points: no variant but the baseline '" + baseline +
                                      "' has a finished ladder point; " + unfinished);
  }
  return Status::Ok();
}

// The summary as stored fits have always named it (the API's enum spelling).
const char* StoredSummaryName(MetricSummary summary) {
  switch (summary) {
    case MetricSummary::kBest: return "METRIC_SUMMARY_BEST";
    case MetricSummary::kLast: return "METRIC_SUMMARY_LAST";
    case MetricSummary::kFinal: break;
  }
  return "METRIC_SUMMARY_FINAL";
}

}  // namespace

StatusOr<SweepFit> FitSweep(Coordinator& coordinator, const FitOptions& request, const std::string& actor) {
  if (request.sweep_id <= 0) return Status::InvalidArgument("FitRequest.sweep_id is required (a positive id)");
  RUNG_RETURN_IF_ERROR(fit::CheckBootstrapReplicates(request.bootstrap));  // before any store read
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, coordinator.sweeps().Get(request.sweep_id));
  const std::string metric = request.metric.empty() ? sweep.metric.name : request.metric;
  std::vector<std::string> variant_keys = request.variant_keys;
  RUNG_ASSIGN_OR_RETURN(SweepLadder ladder,
                        BuildLadder(coordinator, sweep, metric, request.summary, &variant_keys, request.tuned_value,
                                    request.compute));

  fit::MultiplierOptions options;
  options.baseline = request.baseline;
  if (options.baseline.empty()) {
    if (ladder.baseline_variants.size() != 1) {
      std::string found;
      for (const std::string& variant : ladder.baseline_variants) found += (found.empty() ? "" : ", ") + variant;
      return Status::InvalidArgument(
          "the spec's baseline " + sweep.baseline.dump() + " selects " +
          (ladder.baseline_variants.empty() ? std::string("no variant") : "the variants " + found) +
          " of the variant keys; name one as FitRequest.baseline (rung fit --baseline VARIANT)");
    }
    options.baseline = ladder.baseline;
  } else if (ladder.variants.count(options.baseline) == 0 && !ladder.variants.empty()) {
    std::string variants;
    for (const std::string& variant : ladder.variants) variants += (variants.empty() ? "" : ", ") + variant;
    return Status::InvalidArgument("baseline: no trial of sweep " + sweep.name + " is the variant '" +
                                   options.baseline + "'; its variants: " + variants);
  }
  RUNG_RETURN_IF_ERROR(CheckEnoughPoints(ladder, options.baseline));
  options.bootstrap = request.bootstrap == 0 ? kDefaultFitBootstrap : std::max(0, request.bootstrap);
  options.seed = request.seed;
  options.fixed_e = request.fixed_e;
  options.e_grid = request.e_grid;
  options.fit.residuals = request.power_law_residuals;
  options.keep_going = request.keep_going;
  // An IsoFLOP grid's sizes share a few budgets: the multipliers are measured along its compute-optimal
  // frontier (each budget's best size), and the laws are fitted to every run.
  StatusOr<std::shared_ptr<const ExpandedSweep>> spec = coordinator.tuner().SpecOf(sweep);
  const bool isoflop = spec.ok() && !(*spec)->spec.ladder.isoflop_budgets.empty();
  const fit::LadderResults measured = isoflop ? fit::IsoflopFrontier(ladder.ladder) : ladder.ladder;
  options.predict = !isoflop;
  RUNG_ASSIGN_OR_RETURN(fit::MultiplierReport report, fit::ComputeMultipliers(measured, options));
  if (isoflop) {
    RUNG_RETURN_IF_ERROR(fit::AddPredictedMultipliers(ladder.ladder, measured, options, &report));
    report.notes.push_back(
        "an IsoFLOP grid: the measured multipliers are along its compute-optimal frontier, each budget's best size "
        "(labels C<budget>; the lowest of a few noisy sizes is biased low by their noise), and the predicted ones come "
        "from L(N, D) fitted to every run (rung laws " + std::to_string(sweep.id) + ")");
  }
  report.metric = metric;
  report.compute_count = fit::ComputeCountFormula(request.compute);
  report.tuned_key = ladder.tuned_key;
  report.tuned_policy = ladder.tuned_policy;
  report.tuned = ladder.tuned;
  report.tuned_laws = ladder.tuned_laws;
  for (const fit::TunedPoint& point : report.tuned) {
    if (point.status == "unbracketed") {
      report.notes.push_back(point.variant + " at " + point.label + ": " + report.tuned_key + " " +
                             ExactNumber(point.value) + " is unbracketed (the best value tried lies on an edge): not a tuned point");
    }
  }
  FitRecord record;
  record.sweep_id = sweep.id;
  record.actor = actor;
  record.metric = metric;
  record.baseline = options.baseline;
  record.variant_keys = variant_keys;
  record.options = {{"summary", StoredSummaryName(request.summary)},
                    {"bootstrap", options.bootstrap},
                    {"seed", options.seed},
                    {"fixed_e", options.fixed_e ? json(*options.fixed_e) : json()},
                    {"e_grid", options.e_grid},
                    {"compute", fit::ComputeCountName(request.compute)},
                    {"interval_level", options.interval_level}};
  if (!ladder.tuned_key.empty()) record.options["tuned"] = ladder.tuned_policy;
  if (request.power_law_residuals == fit::PowerLawResiduals::kNats) record.options["power_law_residuals"] = "nats";
  record.points = ladder.points;
  record.result = fit::ReportToJson(report);
  record.result_text = fit::FormatReportTable(report);
  if (!request.store) {
    record.created_at = coordinator.clock().Now();
    return SweepFit{std::move(record), std::move(report)};
  }
  RUNG_ASSIGN_OR_RETURN(FitRecord saved, coordinator.fits().Save(std::move(record)));
  return SweepFit{std::move(saved), std::move(report)};
}

StatusOr<FitRecord> GetFit(Coordinator& coordinator, int64_t fit_id, int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(FitRecord fit, coordinator.fits().Get(fit_id));
  if (sweep_id > 0 && fit.sweep_id != sweep_id) {
    return Status::NotFound("fit " + std::to_string(fit_id) + " is not a fit of sweep " + std::to_string(sweep_id));
  }
  return fit;
}

StatusOr<std::string> LadderCsv(Coordinator& coordinator, int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, coordinator.sweeps().Get(sweep_id));
  std::vector<std::string> variant_keys;
  RUNG_ASSIGN_OR_RETURN(SweepLadder ladder,
                        BuildLadder(coordinator, sweep, sweep.metric.name, MetricSummary::kFinal, &variant_keys));
  const bool seconds = ladder.ladder.has_seconds();
  const bool sizes = !ladder.ladder.runs.empty() &&
                     std::all_of(ladder.ladder.runs.begin(), ladder.ladder.runs.end(),
                                 [](const fit::LadderRun& run) { return run.parameters && run.tokens; });
  std::string csv = std::string("variant,label,compute,loss,seed") + (seconds ? ",seconds" : "") + (sizes ? ",n,d" : "") + "\n";
  for (const fit::LadderRun& run : ladder.ladder.runs) {
    csv += CsvField(run.variant) + "," + CsvField(run.label) + "," + ExactNumber(run.compute) + "," + ExactNumber(run.loss) +
           "," + std::to_string(*run.seed) + (seconds ? "," + ExactNumber(*run.seconds) : "") +
           (sizes ? "," + ExactNumber(*run.parameters) + "," + ExactNumber(*run.tokens) : "") + "\n";
  }
  return csv;
}

}  // namespace rung
