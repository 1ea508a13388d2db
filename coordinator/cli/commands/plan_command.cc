// coordinator/cli/commands/plan_command.cc
//
// `rung plan SPEC`: power analysis before a ladder runs. From the seed noise of an earlier sweep
// (--noise-from SWEEP: the pooled seed sd of its cells and the pairing of its variants' seeds with the
// baseline's, sweeps/fit/seed_noise.h) or given (--seed-sd, --pairing), and the baseline's loss curve
// (fitted to that sweep, or --loss-law), it simulates the spec's ladder as written, every variant but
// the baseline at an assumed multiplier (--multiplier), through the fit's own estimator and interval
// code (sweeps/fit/precision_plan.h): each multiplier's predicted interval width and the power to tell
// it from 1; then the seeds each ladder point needs for a target power (and width), with the sweep's
// FLOPs and time at those seeds (the time model of `rung validate`, coordinator/cli/trial_time_model.h).
//
// Exit codes: 0 planned; 2 bad input (spec errors with file:line:col, bad options, an earlier sweep
// without two seeds, no baseline); 1 the simulation failed; 3 coordinator unreachable.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/ladder_source.h"
#include "coordinator/cli/text_table.h"
#include "coordinator/cli/trial_time_model.h"
#include "core/common/command_line.h"
#include "sweeps/fit/precision_plan.h"
#include "sweeps/fit/seed_noise.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/spec/ladder_variant.h"

namespace rung::cli {
namespace {

using nlohmann::json;

struct PlanCommandOptions {
  std::string spec_path;
  LadderSource noise_source;  // --noise-from SWEEP: noise_source.sweep_id
  std::optional<double> seed_sd;
  std::optional<double> pairing;
  std::vector<double> loss_law;  // E, A, alpha
  std::string baseline;
  double multiplier = 1.03;
  double power = 0.8;
  std::optional<double> target_width;
  double level = 0.95;
  std::string estimator = "hermite";
  int studies = 200;
  int max_seeds = 16;
  int workers = 1;
  double flops_per_sec = 0;
  int threads = 0;  // 0: the online cores
  std::string format = "table";
  int64_t max_trials = kDefaultMaxTrials;
};

// The spec's ladder as the plan simulates it, and what its cost scales with.
struct SpecLadder {
  std::vector<fit::SyntheticVariant> variants;  // named as a fit of the sweep names them
  std::string baseline;
  int seeds = 1;                                 // distinct seeds as written
  std::vector<const ExpandedTrial*> one_seed;    // the trials of the first seed: the cost of one seed
  double flops_per_seed = 0;                     // 6ND of those trials
};

// The noise and curve the simulation draws from, and where each came from.
struct PlanNoise {
  double sigma = 0;
  double rho = 0;
  std::string sigma_from;
  std::string rho_from;
  fit::PowerLaw law;
  std::string law_from;
  std::optional<fit::SeedNoise> measured;
  // The baseline computes the law was fitted on (FLOPs); unset for a given law.
  std::optional<std::pair<double, double>> fitted_range;
  // Measured per ladder label (--noise-from, neither --seed-sd nor --pairing given): used at the
  // spec's rungs of the same label in place of sigma and rho.
  std::map<std::string, fit::LabelNoise> by_label;
  // Measured per (variant, label) with 2+ paired seeds: how far the variant strays from the baseline's
  // run of its seed; used for the spec's cells of the same variant and label.
  std::map<std::pair<std::string, std::string>, fit::GapNoise> by_cell;
};

std::string Fixed(double value, int digits) {
  std::ostringstream text;
  text.precision(digits);
  text << std::fixed << value;
  return text.str();
}

// The seed of a trial: its assignment, else its config's seed.
std::string SeedOf(const ExpandedTrial& trial) {
  if (trial.assignments.contains("seed")) return trial.assignments.at("seed").dump();
  return std::to_string(trial.config.seed);
}

// Builds the plan's variants from the expanded spec; INVALID_ARGUMENT when it is not a ladder the
// plan can simulate.
StatusOr<SpecLadder> LadderOfSpec(const ExpandedSweep& sweep, const std::string& baseline_option) {
  if (sweep.spec.tune.set) {
    return Status::InvalidArgument(sweep.spec.name + ": the spec searches " + sweep.spec.tune.key +
                                   " (a tune block); plan the ladder with it fixed at its value");
  }
  std::vector<const json*> assignments;
  for (const ExpandedTrial& trial : sweep.trials) assignments.push_back(&trial.assignments);
  const std::vector<std::string> keys = DefaultVariantKeys(assignments);
  SpecLadder ladder;
  std::map<std::string, size_t> variant_at;
  std::set<std::string> seeds, baselines;
  const std::string first_seed = sweep.trials.empty() ? "" : SeedOf(sweep.trials.front());
  for (const ExpandedTrial& trial : sweep.trials) {
    const std::string name = LadderVariantName(trial.assignments, trial.config_json, keys);
    seeds.insert(SeedOf(trial));
    if (trial.baseline) baselines.insert(name);
    auto [at, added] = variant_at.emplace(name, ladder.variants.size());
    if (added) ladder.variants.push_back({name, 1.0, {}});
    auto& points = ladder.variants[at->second].points;
    const bool known = std::any_of(points.begin(), points.end(),
                                   [&](const auto& point) { return point.first == trial.rung_label; });
    if (!known) points.emplace_back(trial.rung_label, trial.flops);
    if (SeedOf(trial) == first_seed) {
      ladder.one_seed.push_back(&trial);
      ladder.flops_per_seed += trial.flops;
    }
  }
  for (auto& variant : ladder.variants) {
    std::sort(variant.points.begin(), variant.points.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
  }
  ladder.seeds = static_cast<int>(seeds.size());
  if (!baseline_option.empty()) {
    if (!variant_at.count(baseline_option)) {
      return Status::InvalidArgument("--baseline " + baseline_option + ": no such variant in " + sweep.spec.name);
    }
    ladder.baseline = baseline_option;
  } else if (baselines.size() == 1) {
    ladder.baseline = *baselines.begin();
  } else {
    return Status::InvalidArgument(sweep.spec.name + ": its baseline selects " + std::to_string(baselines.size()) +
                                   " variants; give --baseline VARIANT");
  }
  if (ladder.variants.size() < 2) {
    return Status::InvalidArgument(sweep.spec.name + ": one variant only; a plan compares variants with a baseline");
  }
  return ladder;
}

// The noise measured on an earlier ladder (`source`), pooled and per rung label (unless --seed-sd or
// --pairing replace it).
void UseMeasuredNoise(const fit::SeedNoise& measured, const std::string& source, const std::string& baseline,
                      const PlanCommandOptions& options, PlanNoise* noise) {
  noise->sigma = measured.sigma;
  noise->rho = measured.ModelRho();
  noise->sigma_from = "pooled over " + std::to_string(measured.cells) + " cells of " + source + " (" +
                      std::to_string(measured.df) + " df)";
  noise->rho_from = "measured on " + std::to_string(measured.pairs) + " seed pairs with " + baseline + " in " + source +
                    (measured.rho == noise->rho
                         ? ""
                         : " (measured " + Number(measured.rho, 5) + ", used as " + Number(noise->rho, 5) + ")");
  noise->measured = measured;
  if (options.seed_sd || options.pairing) return;
  for (const auto& [label, pooled] : measured.per_label) {
    if (!(pooled.sigma > 0)) continue;
    // A label without pairs takes the pairing of every label (a variant there had one seed).
    const fit::PooledNoise& pairing = pooled.pairs > 0 ? pooled : static_cast<const fit::PooledNoise&>(measured);
    noise->by_label[label] = {pooled.sigma, pairing.ModelRho(), pooled.df, pairing.OwnDf()};
  }
  for (const fit::CellNoise& cell : measured.per_cell) {
    if (cell.gap_pairs >= 2) noise->by_cell[{cell.variant, cell.label}] = {cell.gap_sd, cell.gap_pairs - 1};
  }
}

// The noise from --noise-from SWEEP (measured) with the options' overrides, or from the options alone.
StatusOr<PlanNoise> NoiseOf(const PlanCommandOptions& options) {
  PlanNoise noise;
  if (options.noise_source.sweep_id > 0) {
    std::string baseline;
    LadderMetric metric;
    RUNG_ASSIGN_OR_RETURN(fit::LadderResults earlier, LoadLadder(options.noise_source, &baseline, &metric));
    if (metric.maximize) {
      return Status::InvalidArgument("sweep " + std::to_string(options.noise_source.sweep_id) + "'s metric " +
                                     metric.name + " is maximised; a plan models a loss");
    }
    StatusOr<fit::SeedNoise> measured_or = fit::MeasureSeedNoise(earlier, baseline);
    // Given a seed sd, a one-seed sweep still gives the loss curve.
    if (!measured_or.ok() && !options.seed_sd) return measured_or.status();
    if (measured_or.ok()) UseMeasuredNoise(*measured_or, earlier.source, baseline, options, &noise);
    if (options.loss_law.empty()) {
      RUNG_ASSIGN_OR_RETURN(fit::LossLaw law, fit::FitBaselineLossLaw(earlier, baseline));
      noise.law = law.law;
      noise.law_from = law.how;
      for (const fit::LadderRun& run : earlier.runs) {
        if (run.variant != baseline) continue;
        if (!noise.fitted_range) noise.fitted_range = {run.compute, run.compute};
        noise.fitted_range->first = std::min(noise.fitted_range->first, run.compute);
        noise.fitted_range->second = std::max(noise.fitted_range->second, run.compute);
      }
    }
  }
  if (options.seed_sd) {
    noise.sigma = *options.seed_sd;
    noise.sigma_from = "given (--seed-sd)";
  }
  if (options.pairing) {
    noise.rho = *options.pairing;
    noise.rho_from = "given (--pairing)";
  }
  if (noise.sigma_from.empty()) {
    return Status::InvalidArgument("the seed noise is needed: --noise-from SWEEP (an earlier sweep with 2+ seeds) "
                                   "or --seed-sd NATS");
  }
  if (noise.rho_from.empty()) noise.rho_from = "none assumed (--pairing RHO, or --noise-from a sweep with 2+ seeds)";
  if (!options.loss_law.empty()) {
    const double e = options.loss_law[0], a = options.loss_law[1], alpha = options.loss_law[2];
    if (!(a > 0) || !(alpha > 0) || !(e >= 0) || !std::isfinite(a) || !std::isfinite(alpha) || !std::isfinite(e)) {
      return Status::InvalidArgument("--loss-law E,A,ALPHA: needs E >= 0, A > 0 and ALPHA > 0 (L = E + A C^-ALPHA, "
                                     "C in FLOPs)");
    }
    noise.law = {std::log(a), alpha, e, 1.0};
    noise.law_from = "L = " + Number(e) + " + " + Number(a) + " C^-" + Number(alpha) + " (--loss-law)";
  } else if (noise.law_from.empty()) {
    return Status::InvalidArgument("the baseline's loss curve is needed: --loss-law E,A,ALPHA (L = E + A C^-ALPHA, "
                                   "C in FLOPs) or --noise-from SWEEP (fitted to its baseline)");
  }
  return noise;
}

std::optional<fit::Estimator> EstimatorNamed(const std::string& name) {
  for (fit::Estimator estimator : {fit::Estimator::kPiecewise, fit::Estimator::kHermite,
                                   fit::Estimator::kPowerLawSharedE, fit::Estimator::kPowerLawFreeE}) {
    if (name == fit::EstimatorName(estimator)) return estimator;
  }
  return std::nullopt;
}

// The variants with every one but the baseline at the assumed multiplier.
std::vector<fit::SyntheticVariant> AssumedVariants(const SpecLadder& ladder, double multiplier) {
  std::vector<fit::SyntheticVariant> variants = ladder.variants;
  for (fit::SyntheticVariant& variant : variants) variant.multiplier = variant.name == ladder.baseline ? 1 : multiplier;
  return variants;
}

std::string WidthText(const std::optional<double>& width) { return width ? Number(*width, 3) : "-"; }

// The sweep's cost at `seeds` seeds: FLOPs (6ND) and the time on the options' workers.
struct SeedCost {
  double flops = 0;
  double seconds = 0;
};
SeedCost CostAt(const SpecLadder& ladder, int seeds, const TimeModel& time_model, int workers) {
  std::vector<double> seconds;
  for (int s = 0; s < seeds; ++s) {
    for (const ExpandedTrial* trial : ladder.one_seed) seconds.push_back(time_model.Seconds(*trial));
  }
  return {ladder.flops_per_seed * seeds, Makespan(seconds, workers)};
}

json LabelNoiseJson(const std::map<std::string, fit::LabelNoise>& by_label) {
  json object = json::object();
  for (const auto& [label, noise] : by_label) object[label] = {{"seed_sd", noise.sigma}, {"pairing", noise.rho}};
  return object;
}

json GapNoiseJson(const std::map<std::pair<std::string, std::string>, fit::GapNoise>& by_cell) {
  json rows = json::array();
  for (const auto& [cell, noise] : by_cell) {
    rows.push_back({{"variant", cell.first}, {"rung", cell.second}, {"gap_sd", noise.sd}, {"df", noise.df}});
  }
  return rows;
}

json CellJson(const fit::PlanCell& cell) {
  return {{"variant", cell.variant},         {"rung", cell.label},
          {"compute", cell.compute},         {"multiplier", cell.multiplier},
          {"seeds", cell.seeds},             {"studies", cell.studies},
          {"with_interval", cell.with_interval}, {"width_median", cell.width_median ? json(*cell.width_median) : json()},
          {"width_p10", cell.width_p10 ? json(*cell.width_p10) : json()},
          {"width_p90", cell.width_p90 ? json(*cell.width_p90) : json()},
          {"power", cell.power}};
}

TextTable AsWrittenTable(const std::vector<fit::PlanCell>& cells, const fit::PowerLaw& law) {
  TextTable table({"variant", "rung", "C (6ND)", "loss gap", "width (median)", "width p10-p90", "power"});
  for (size_t column = 2; column < 7; ++column) table.AlignRight(column);
  for (const fit::PlanCell& cell : cells) {
    const double gap = law.Predict(cell.compute) - law.Predict(cell.multiplier * cell.compute);
    table.AddRow({cell.variant, cell.label, Scientific(cell.compute, 2), Number(gap, 3), WidthText(cell.width_median),
                  WidthText(cell.width_p10) + " - " + WidthText(cell.width_p90), Fixed(cell.power, 2)},
                 CellJson(cell));
  }
  return table;
}

TextTable SeedsNeededTable(const std::vector<fit::SeedsNeeded>& needed, const SpecLadder& ladder,
                           const TimeModel& time_model, const PlanCommandOptions& options) {
  TextTable table({"variant", "rung", "seeds", "width (median)", "power", "FLOPs (6ND, sweep)",
                   "time (" + std::to_string(options.workers) + " worker" + (options.workers == 1 ? "" : "s") + ")"});
  for (size_t column = 2; column < 7; ++column) table.AlignRight(column);
  for (const fit::SeedsNeeded& row : needed) {
    json object = CellJson(row.at);
    object["seeds_needed"] = row.seeds ? json(*row.seeds) : json();
    if (!row.seeds) {
      table.AddRow({row.variant, row.label, "> " + std::to_string(options.max_seeds), WidthText(row.at.width_median),
                    Fixed(row.at.power, 2), "-", "-"},
                   object);
      continue;
    }
    const SeedCost cost = CostAt(ladder, *row.seeds, time_model, options.workers);
    object["flops"] = cost.flops;
    object["seconds"] = cost.seconds;
    table.AddRow({row.variant, row.label, std::to_string(*row.seeds), WidthText(row.at.width_median),
                  Fixed(row.at.power, 2), Scientific(cost.flops, 2), HumanDuration(cost.seconds)},
                 object);
  }
  return table;
}

std::string Percent(double level) { return std::to_string(static_cast<int>(std::lround(100 * level))) + "%"; }

// Where the spec's ladder reaches beyond the computes its loss curve was fitted on (by more than a
// factor of 2): a warning that says how far; "" otherwise.
std::string ExtrapolationWarning(const SpecLadder& ladder, const PlanNoise& noise) {
  if (!noise.fitted_range) return "";
  double low = 0, high = 0;
  for (const fit::SyntheticVariant& variant : ladder.variants) {
    for (const auto& [label, compute] : variant.points) {
      low = low == 0 ? compute : std::min(low, compute);
      high = std::max(high, compute);
    }
  }
  const double below = std::log10(noise.fitted_range->first / low);
  const double above = std::log10(high / noise.fitted_range->second);
  if (below <= std::log10(2.0) && above <= std::log10(2.0)) return "";
  return "the spec's ladder spans " + Scientific(low, 2) + " to " + Scientific(high, 2) +
         " FLOPs and the loss curve was fitted on " + Scientific(noise.fitted_range->first, 2) + " to " +
         Scientific(noise.fitted_range->second, 2) + ": extrapolated " + Number(std::max(below, above), 2) +
         " decade(s); the widths there rest on that extrapolation";
}

// The header: what was simulated, from what.
void PrintHeader(const ExpandedSweep& sweep, const SpecLadder& ladder, const PlanNoise& noise,
                 const PlanCommandOptions& options) {
  size_t points = 0;
  for (const fit::SyntheticVariant& variant : ladder.variants) points = std::max(points, variant.points.size());
  std::cout << "rung plan: " << sweep.spec.name << " (" << options.spec_path << "): " << ladder.variants.size()
            << " variants x " << points << " ladder points, " << ladder.seeds << " seed" << (ladder.seeds == 1 ? "" : "s")
            << " as written; baseline " << ladder.baseline << "\n"
            << "seed noise: sd " << Number(noise.sigma, 3) << " nats, " << noise.sigma_from << "\n"
            << "pairing: " << Number(noise.rho, 5) << " (each run's own noise: sd "
            << Number(noise.sigma * std::sqrt(1 - noise.rho), 3) << " nats), " << noise.rho_from << "\n"
            << "loss curve: " << noise.law_from << "\n";
  for (const fit::SyntheticVariant& variant : ladder.variants) {
    if (variant.name != ladder.baseline) continue;
    for (const auto& [label, compute] : variant.points) {
      auto at = noise.by_label.find(label);
      if (at == noise.by_label.end()) continue;
      const fit::PooledNoise& measured = noise.measured->per_label.at(label);
      std::cout << "  at " << label << ": seed sd " << Number(at->second.sigma, 3) << " nats (" << measured.df
                << " df), pairing " << Number(at->second.rho, 5) << " ("
                << (measured.pairs > 0 ? std::to_string(measured.pairs) + " seed pairs" : "no pairs here: every rung's")
                << "; each run's own noise sd " << Number(at->second.sigma * std::sqrt(1 - at->second.rho), 3)
                << " nats): used at this rung in place of the pooled numbers, each simulated ladder drawing its "
                   "noise around these estimates\n";
    }
  }
  for (const fit::SyntheticVariant& variant : ladder.variants) {
    std::string gaps;
    for (const auto& [label, compute] : variant.points) {
      auto at = noise.by_cell.find({variant.name, label});
      if (at == noise.by_cell.end() || variant.name == ladder.baseline) continue;
      gaps += (gaps.empty() ? "" : ", ") + label + " " + Number(at->second.sd, 3) + " (" +
              std::to_string(at->second.df) + " df)";
    }
    if (!gaps.empty()) std::cout << "  " << variant.name << " against " << ladder.baseline << ", paired gap sd: " << gaps << "\n";
  }
  if (!noise.by_cell.empty()) {
    std::cout << "  (a variant with a measured gap follows the baseline's run of its seed with that noise; each "
                 "simulated ladder draws it around the estimate)\n";
  }
  std::cout << "assumed: every variant at CM = " << Number(options.multiplier) << " against " << ladder.baseline
            << "; estimator " << options.estimator << ", " << Percent(options.level)
            << " jackknife gap t intervals (as rung fit reports them); " << options.studies
            << " simulated ladders per seed count\n"
            << "width: the interval's high - low; power: the share of simulated ladders whose interval excludes 1 "
               "(a Monte Carlo standard error up to "
            << Number(0.5 / std::sqrt(static_cast<double>(options.studies)), 2)
            << " at these studies: the seeds needed can move by one; --studies sharpens it)\n";
}

// The simulation's setting: the noise and curve, per rung and per variant where measured, and the options.
fit::PlanSetting SettingOf(const PlanNoise& noise, const SpecLadder& ladder, const PlanCommandOptions& options) {
  fit::PlanSetting setting;
  setting.law = noise.law;
  setting.sigma = noise.sigma;
  setting.rho = noise.rho;
  for (const fit::SyntheticVariant& variant : ladder.variants) {
    for (const auto& [label, compute] : variant.points) {
      if (auto at = noise.by_label.find(label); at != noise.by_label.end()) setting.label_noise[label] = at->second;
      auto cell = noise.by_cell.find({variant.name, label});
      if (cell != noise.by_cell.end() && variant.name != ladder.baseline) setting.gap_noise[cell->first] = cell->second;
    }
  }
  setting.estimator = *EstimatorNamed(options.estimator);
  setting.level = options.level;
  setting.studies = options.studies;
  setting.threads = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  return setting;
}

// The plan as one JSON document: what it rests on, the table as written and the seeds needed.
json PlanJson(const ExpandedSweep& sweep, const SpecLadder& ladder, const PlanNoise& noise,
              const fit::PlanSetting& setting, const PlanCommandOptions& options, const TextTable& written,
              const TextTable& seeds) {
  json document = {{"spec", sweep.spec.name},
                   {"baseline", ladder.baseline},
                   {"seeds_as_written", ladder.seeds},
                   {"seed_sd", noise.sigma},
                   {"pairing", noise.rho},
                   {"noise_by_rung", LabelNoiseJson(setting.label_noise)},
                   {"gap_noise", GapNoiseJson(setting.gap_noise)},
                   {"loss_law", {{"e", noise.law.e}, {"a", noise.law.A()}, {"alpha", noise.law.alpha}}},
                   {"multiplier", options.multiplier},
                   {"level", options.level},
                   {"power_target", options.power},
                   {"estimator", options.estimator},
                   {"as_written", written.Json()},
                   {"seeds_needed", seeds.Json()}};
  if (options.target_width) document["target_width"] = *options.target_width;
  return document;
}

int RunPlan(const PlanCommandOptions& options) {
  StatusOr<ExpandedSweep> sweep =
      LoadSweepSpec(options.spec_path, ExpansionLimits{options.max_trials, "rung plan --max-trials N"});
  if (!sweep.ok()) {
    std::cerr << "rung plan: " << sweep.status().message() << "\n";
    return kUsage;
  }
  StatusOr<SpecLadder> ladder = LadderOfSpec(*sweep, options.baseline);
  if (!ladder.ok()) {
    std::cerr << "rung plan: " << ladder.status().message() << "\n";
    return kUsage;
  }
  StatusOr<PlanNoise> noise = NoiseOf(options);
  if (!noise.ok()) {
    std::cerr << "rung plan: " << noise.status().message() << "\n";
    return noise.status().code() == StatusCode::kUnavailable ? kUnavailable : kUsage;
  }
  if (const std::string warning = ExtrapolationWarning(*ladder, *noise); !warning.empty()) {
    std::cerr << "rung plan: warning: " << warning << "\n";
  }
  const fit::PlanSetting setting = SettingOf(*noise, *ladder, options);
  const std::vector<fit::SyntheticVariant> variants = AssumedVariants(*ladder, options.multiplier);
  StatusOr<std::vector<fit::PlanCell>> as_written =
      fit::SimulatePlan(variants, ladder->baseline, std::max(2, ladder->seeds), setting);
  StatusOr<std::vector<fit::SeedsNeeded>> needed = as_written.ok()
      ? fit::FindSeedsNeeded(variants, ladder->baseline, setting, options.power, options.target_width, options.max_seeds)
      : StatusOr<std::vector<fit::SeedsNeeded>>(as_written.status());
  if (!needed.ok()) {
    std::cerr << "rung plan: " << needed.status().message() << "\n";
    return needed.status().code() == StatusCode::kInvalidArgument ? kUsage : kFailure;
  }
  const int threads = TrainerThreads(*sweep);
  const TimeModel time_model =
      ChooseTimeModel(options.flops_per_sec, ExecutableDirectory() + "/rung-train", threads, "rung plan");
  const TextTable written = AsWrittenTable(*as_written, noise->law);
  const TextTable seeds = SeedsNeededTable(*needed, *ladder, time_model, options);
  if (options.format == "json") {
    std::cout << PlanJson(*sweep, *ladder, *noise, setting, options, written, seeds).dump(2) << "\n";
    return kOk;
  }
  PrintHeader(*sweep, *ladder, *noise, options);
  std::cout << "\nAs written (" << std::max(2, ladder->seeds) << " seeds"
            << (ladder->seeds < 2 ? "; one seed gives no interval, so 2 are shown" : "") << "):\n";
  written.PrintText(std::cout);
  std::cout << "\nSeeds to tell CM = " << Number(options.multiplier) << " from 1 at " << Percent(options.level)
            << " in " << Percent(options.power) << " of ladders"
            << (options.target_width ? " with a median width <= " + Number(*options.target_width) : "")
            << " (2 to " << options.max_seeds << " tried):\n";
  seeds.PrintText(std::cout);
  std::cout << "time: " << EstimateBasis(time_model, options.flops_per_sec, threads, options.spec_path) << "\n";
  return kOk;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "plan",
      "Power analysis before a ladder runs: the interval width each compute multiplier of SPEC will have and\n"
      "the seeds each ladder point needs to tell an assumed multiplier from 1, with their FLOPs and time.\n"
      "Predicted by simulating the spec's ladder (its variants, rungs and compute) through the estimator and\n"
      "intervals rung fit uses, from the seed noise of an earlier sweep (--noise-from SWEEP: pooled seed sd\n"
      "and the pairing of its variants' seeds with the baseline's, and its baseline's loss curve) or given\n"
      "(--seed-sd, --pairing, --loss-law).");
  command->add_option("spec", options->spec_path, "Sweep spec (YAML)")->required();
  command->add_option("--noise-from", options->noise_source.sweep_id,
                      "An earlier sweep (id) with 2+ seeds: its seed noise, pairing and baseline loss curve")
      ->type_name("SWEEP")
      ->check(CLI::PositiveNumber);
  AddConnectionOptions(command, &options->noise_source.connection);
  command->add_option("--seed-sd", options->seed_sd, "The sd of one run's final loss over seeds, nats")
      ->type_name("NATS")
      ->check(PositiveNumberCheck());
  command->add_option("--pairing", options->pairing,
                      "The share of that variance a variant's run shares with the baseline's run of the same seed "
                      "and rung, in [0, 1] (default 0, or measured with --noise-from)")
      ->type_name("RHO")
      ->check(CLI::Range(0.0, 1.0));
  command->add_option("--loss-law", options->loss_law,
                      "The baseline's loss curve L = E + A C^-ALPHA (C in FLOPs, 6ND), when not fitted to --noise-from")
      ->type_name("E,A,ALPHA")
      ->delimiter(',')
      ->expected(3);
  command->add_option("--baseline", options->baseline, "The variant the others are measured against (default: the "
                                                       "spec's baseline)")
      ->type_name("VARIANT");
  command->add_option("--multiplier", options->multiplier, "The true multiplier assumed for every other variant")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e3));
  command->add_option("--power", options->power, "The share of ladders that must tell it from 1")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  command->add_option("--target-width", options->target_width,
                      "Also require a median interval width (high - low) at most this")
      ->type_name("W")
      ->check(PositiveNumberCheck());
  command->add_option("--level", options->level, "The intervals' level")->capture_default_str()->check(CLI::Range(0.5, 0.999));
  command->add_option("--estimator", options->estimator, "hermite, piecewise, power_law_shared_e or power_law_free_e")
      ->capture_default_str()
      ->check(CLI::IsMember({"hermite", "piecewise", "power_law_shared_e", "power_law_free_e"}));
  command->add_option("--studies", options->studies, "Simulated ladders per seed count")
      ->capture_default_str()
      ->check(CLI::Range(20, 100000));
  command->add_option("--max-seeds", options->max_seeds, "The most seeds to try")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  command->add_option("--workers", options->workers, "Workers sharing the sweep, for the time")
      ->capture_default_str()
      ->check(PositiveNumberCheck());
  command->add_option("--flops-per-sec", options->flops_per_sec,
                      "Training FLOP/s of one worker, for the time (instead of rung validate's calibration)")
      ->check(PositiveNumberCheck());
  command->add_option("--threads", options->threads, "Threads for the simulation (default: the online cores)")
      ->check(CLI::Range(1, 1024));
  command->add_option("--format", options->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  command
      ->add_option("--max-trials", options->max_trials, "Refuse a spec that expands to more trials")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMaxTrialsCeiling));
  command->callback([options, exit_code]() { *exit_code = RunPlan(*options); });
}

RUNG_CLI_COMMAND("plan", kHere, AddPlanCommand);

}  // namespace rung::cli
