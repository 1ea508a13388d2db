// bench/tuning_search.cc
//
// rung-bench-tuning: what the learning-rate search (sweeps/tune/lr_search.h) and successive halving
// (sweeps/tune/early_stopping.h) spend, on the stand-in trainer's loss surface
// (tests/support/stand_in_trainer/loss_surface.h), against a full grid of the same range. The search
// is the product's own code, run round by round as the coordinator runs it: each round every trial
// the plan asks for is "trained" (its curve evaluated at its evaluation steps), and with ASHA the
// trials of one round reach their evaluations together, the coordinator's decisions applied after
// each. A trial ASHA stops costs the fraction of its FLOPs it ran.
//
//   rung-bench-tuning --spec sweeps/examples/tuning-quickstart.yaml [--surface JSON] [--asha-reduction 3]
//                     [--asha-at 0.25,0.5]
//
// Prints one JSON object: per mode (search, search+asha, full grid) the trials, the FLOPs (6ND) and
// each cell's chosen value, and whether the chosen values agree.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/command_line.h"
#include "core/config/model_arithmetic.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/tune/early_stopping.h"
#include "sweeps/tune/lr_search.h"
#include "tests/support/stand_in_trainer/loss_surface.h"

namespace rung {
namespace {

using nlohmann::json;

struct Spent {
  int64_t trials = 0;
  double flops = 0;
  std::map<std::string, double> chosen;  // cell -> best value
  int rounds = 0;
  int64_t low = INT64_MAX, high = INT64_MIN;  // the grid indices tried
};

// The evaluations of a trial's run on the surface: (step, tokens, val_loss) at every eval step.
std::vector<Evaluation> EvaluationsOf(const stand_in::LossSurface& surface, const ExpandedTrial& trial) {
  const TrialConfig& config = trial.config;
  const stand_in::TrialCurve curve = stand_in::CurveForTrial(surface, config, config.train.steps);
  const int64_t per_step = TokensPerStep(config.train, config.data.seq_len);
  std::vector<Evaluation> evaluations;
  const int64_t every = std::max<int64_t>(1, config.train.eval_every);
  for (int64_t step = every; step <= config.train.steps; step += every) {
    evaluations.push_back({step, step * per_step, curve.ValLoss(step)});
  }
  if (evaluations.empty() || evaluations.back().step != config.train.steps) {
    evaluations.push_back({config.train.steps, config.train.steps * per_step, curve.ValLoss(config.train.steps)});
  }
  return evaluations;
}

// Runs the search to its end; with `asha`, successive halving inside each tuning cell.
Spent RunSearch(const ExpandedSweep& expanded, const stand_in::LossSurface& surface, const AshaStop* asha) {
  Spent spent;
  std::vector<ObservedTrial> store;
  std::map<std::string, std::vector<EvaluatedTrial>> done_by_cell;  // evaluations of the cell's earlier trials
  std::set<std::string> known;
  for (; spent.rounds < 1000; ++spent.rounds) {
    StatusOr<TuningPlan> plan = PlanTuning(expanded, store);
    if (!plan.ok()) {
      std::cerr << plan.status().message() << "\n";
      std::exit(1);
    }
    std::map<int64_t, std::vector<const PlannedTrial*>> round;  // by cell
    for (const PlannedTrial& trial : plan->trials) {
      if (!known.insert(trial.trial.identity).second) continue;
      round[trial.cell].push_back(&trial);
      spent.low = std::min(spent.low, trial.grid_index);
      spent.high = std::max(spent.high, trial.grid_index);
    }
    if (round.empty()) {
      for (const TuningCellReport& cell : plan->cells) {
        if (cell.best_value) spent.chosen[cell.cell.dump()] = *cell.best_value;
      }
      return spent;
    }
    for (const auto& [cell_id, trials] : round) {
      const std::string cell = plan->cells[static_cast<size_t>(cell_id)].cell.dump();
      std::vector<std::vector<Evaluation>> series;
      for (const PlannedTrial* trial : trials) series.push_back(EvaluationsOf(surface, trial->trial));
      // The round's trials reach their evaluations together; ASHA judges after each.
      std::vector<size_t> stopped_at(trials.size(), SIZE_MAX);
      size_t longest = 0;
      for (const auto& one : series) longest = std::max(longest, one.size());
      for (size_t eval = 0; asha != nullptr && eval < longest; ++eval) {
        std::vector<EvaluatedTrial> cell_trials = done_by_cell[cell];
        const size_t first_new = cell_trials.size();
        for (size_t i = 0; i < trials.size(); ++i) {
          EvaluatedTrial now;
          now.total_tokens = trials[i]->trial.tokens;
          const size_t seen = stopped_at[i] == SIZE_MAX ? eval + 1 : std::min(eval, stopped_at[i]) + 1;
          const size_t upto = std::min(series[i].size(), seen);
          now.asha_metric.assign(series[i].begin(), series[i].begin() + static_cast<std::ptrdiff_t>(upto));
          cell_trials.push_back(now);
        }
        for (size_t i = 0; i < trials.size(); ++i) {
          if (stopped_at[i] != SIZE_MAX || eval >= series[i].size()) continue;
          if (AshaDecision(*asha, cell_trials, first_new + i)) stopped_at[i] = eval;
        }
      }
      for (size_t i = 0; i < trials.size(); ++i) {
        const PlannedTrial& trial = *trials[i];
        ObservedTrial observed;
        observed.identity = trial.trial.identity;
        observed.order = static_cast<int64_t>(store.size());
        observed.rung_label = trial.trial.rung_label;
        observed.assignments = trial.trial.assignments;
        EvaluatedTrial evaluated;
        evaluated.total_tokens = trial.trial.tokens;
        ++spent.trials;
        if (stopped_at[i] != SIZE_MAX) {
          observed.outcome = TunedOutcome::kStoppedByAsha;
          const double fraction = static_cast<double>(series[i][stopped_at[i]].step) /
                                  static_cast<double>(trial.trial.config.train.steps);
          spent.flops += fraction * trial.trial.flops;
          evaluated.asha_metric.assign(series[i].begin(),
                                       series[i].begin() + static_cast<std::ptrdiff_t>(stopped_at[i] + 1));
        } else if (stand_in::Diverges(surface, trial.trial.config.train.lr)) {
          observed.outcome = TunedOutcome::kDiverged;
          spent.flops += trial.trial.flops * surface.diverge_at;
        } else {
          observed.outcome = TunedOutcome::kFinished;
          observed.metric = series[i].back().value;
          spent.flops += trial.trial.flops;
          evaluated.asha_metric = series[i];
        }
        done_by_cell[cell].push_back(evaluated);
        store.push_back(observed);
      }
    }
  }
  return spent;
}

// Every cell, every seed, at every grid value from the lowest to the highest the search tried.
Spent RunFullGrid(const ExpandedSweep& expanded, const stand_in::LossSurface& surface, int64_t low, int64_t high) {
  Spent spent;
  const TuneSpec& tune = expanded.spec.tune;
  const std::vector<std::string> axis_keys = expanded.spec.axes.Keys();
  std::map<std::string, std::map<int64_t, std::pair<double, int>>> sums;  // cell -> index -> (sum, n)
  for (const ExpandedTrial& base : expanded.trials) {
    const std::string cell = TuningCellOf(tune, axis_keys, base.rung_label, base.assignments).dump();
    for (int64_t index = low; index <= high; ++index) {
      StatusOr<ExpandedTrial> trial = ExpandTrialWithValue(base, tune.key, tune.ValueAt(index));
      if (!trial.ok()) continue;
      ++spent.trials;
      const bool diverges = stand_in::Diverges(surface, trial->config.train.lr);
      spent.flops += diverges ? trial->flops * surface.diverge_at : trial->flops;
      if (diverges) continue;
      auto& [sum, n] = sums[cell][index];
      sum += EvaluationsOf(surface, *trial).back().value;
      ++n;
    }
  }
  for (const auto& [cell, by_index] : sums) {
    double best = HUGE_VAL;
    for (const auto& [index, sum_n] : by_index) {
      const double mean = sum_n.first / sum_n.second;
      if (mean < best) best = mean, spent.chosen[cell] = tune.ValueAt(index);
    }
  }
  return spent;
}

json ToJson(const Spent& spent) {
  json chosen = json::object();
  for (const auto& [cell, value] : spent.chosen) chosen[cell] = value;
  return {{"trials", spent.trials}, {"flops_6nd", spent.flops}, {"rounds", spent.rounds}, {"chosen", chosen}};
}

}  // namespace
}  // namespace rung

int main(int argc, char** argv) {
  using namespace rung;
  CLI::App app{"rung-bench-tuning: trials and FLOPs of the LR search, with and without ASHA, against a full grid"};
  std::string spec_path = "sweeps/examples/tuning-quickstart.yaml";
  std::string surface_text = R"({"noise": 0.005})";
  AshaStop asha;
  app.add_option("--spec", spec_path, "A spec with a tune block");
  app.add_option("--surface", surface_text, "The loss surface's parameters (JSON, loss_surface.h)");
  app.add_option("--asha-reduction", asha.reduction, "ASHA's reduction");
  app.add_option("--asha-at", asha.at, "ASHA's fractions of training")->delimiter(',');
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  StatusOr<ExpandedSweep> expanded = LoadSweepSpec(spec_path);
  if (!expanded.ok() || !expanded->spec.tune.set) {
    std::cerr << "rung-bench-tuning: " << (expanded.ok() ? "the spec has no tune block" : expanded.status().message()) << "\n";
    return 2;
  }
  expanded->spec.early_stop = EarlyStopSpec();  // the modes below choose
  StatusOr<stand_in::LossSurface> surface = stand_in::ParseLossSurface(surface_text);
  if (!surface.ok()) {
    std::cerr << "rung-bench-tuning: --surface: " << surface.status().message() << "\n";
    return 2;
  }
  const Spent search = RunSearch(*expanded, *surface, nullptr);
  const Spent with_asha = RunSearch(*expanded, *surface, &asha);
  // The full grid spans the values the search tried, in every cell.
  const int64_t low = search.low, high = search.high;
  const Spent grid = RunFullGrid(*expanded, *surface, low, high);
  nlohmann::json out = {
      {"spec", spec_path},
      {"surface", stand_in::LossSurfaceToJson(*surface)},
      {"grid_range", {{"low_index", low}, {"high_index", high}, {"values", high - low + 1}}},
      {"search", ToJson(search)},
      {"search_with_asha", ToJson(with_asha)},
      {"full_grid", ToJson(grid)},
      {"search_vs_grid", {{"trials", static_cast<double>(search.trials) / grid.trials},
                          {"flops", search.flops / grid.flops}}},
      {"asha_vs_search", {{"trials", static_cast<double>(with_asha.trials) / search.trials},
                          {"flops", with_asha.flops / search.flops}}},
      {"chosen_equal", {{"search_grid", search.chosen == grid.chosen},
                        {"asha_search", with_asha.chosen == search.chosen}}},
  };
  std::cout << out.dump(2) << "\n";
  return 0;
}
