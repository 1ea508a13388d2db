// sweeps/fit/precision_plan.cc
#include "sweeps/fit/precision_plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>

#include "core/diagnostics/score_statistics.h"

namespace rung::fit {
namespace {

// What one study gave for one cell.
struct CellOutcome {
  bool has_interval = false;
  double width = 0;
  bool excludes_one = false;  // on the side of the true multiplier
};

std::string Exact(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

// Names the setting for the studies' seeds: everything that changes a draw.
std::string SettingText(const std::vector<SyntheticVariant>& variants, int seeds, const PlanSetting& setting) {
  std::string text = "plan law=" + Exact(setting.law.log_a) + "," + Exact(setting.law.alpha) + "," +
                     Exact(setting.law.e) + "," + Exact(setting.law.c_ref) + " sigma=" + Exact(setting.sigma) +
                     " rho=" + Exact(setting.rho) + " seeds=" + std::to_string(seeds);
  for (const auto& [label, noise] : setting.label_noise) {
    text += " noise[" + label + "]=" + Exact(noise.sigma) + "," + Exact(noise.rho) + "," +
            std::to_string(noise.sigma_df) + "," + std::to_string(noise.own_df);
  }
  for (const auto& [cell, noise] : setting.gap_noise) {
    text += " gap[" + cell.first + "@" + cell.second + "]=" + Exact(noise.sd) + "," + std::to_string(noise.df);
  }
  for (const SyntheticVariant& variant : variants) {
    text += " " + variant.name + "@" + Exact(variant.multiplier);
    for (const auto& [label, compute] : variant.points) text += "," + label + "=" + Exact(compute);
  }
  return text;
}

Status CheckSetting(const std::vector<SyntheticVariant>& variants, const std::string& baseline, int seeds,
                    const PlanSetting& setting) {
  if (setting.estimator == Estimator::kPowerLawFixedE) {
    return Status::InvalidArgument("the plan runs piecewise, hermite, power_law_shared_e or power_law_free_e");
  }
  if (seeds < 2) return Status::InvalidArgument("a plan needs 2 or more seeds: one seed gives no interval here");
  if (setting.studies < 1) return Status::InvalidArgument("a plan needs 1 or more studies");
  if (!(setting.sigma > 0) || !std::isfinite(setting.sigma)) {
    return Status::InvalidArgument("the seed sd must be a finite number > 0 nats");
  }
  if (!(setting.rho >= 0 && setting.rho <= 1)) return Status::InvalidArgument("the pairing must be in [0, 1]");
  for (const auto& [label, noise] : setting.label_noise) {
    if (!(noise.sigma > 0) || !std::isfinite(noise.sigma) || !(noise.rho >= 0 && noise.rho <= 1)) {
      return Status::InvalidArgument("the noise at " + label + " needs a finite sd > 0 and a pairing in [0, 1]");
    }
  }
  for (const auto& [cell, noise] : setting.gap_noise) {
    if (!(noise.sd >= 0) || !std::isfinite(noise.sd)) {
      return Status::InvalidArgument("the gap noise of " + cell.first + " at " + cell.second + " needs a finite sd >= 0");
    }
  }
  if (!(setting.level > 0 && setting.level < 1)) return Status::InvalidArgument("the level must be in (0, 1)");
  bool found = false;
  for (const SyntheticVariant& variant : variants) found = found || variant.name == baseline;
  if (!found) return Status::InvalidArgument("the baseline '" + baseline + "' is not among the plan's variants");
  return Status::Ok();
}

// The model of one study: the noise of every label measured with finite degrees of freedom drawn
// around its estimate (ScaledByEstimateUncertainty), from a generator of its own.
SyntheticLadderModel StudyModel(const SyntheticLadderModel& model, const std::string& text, int study) {
  SyntheticLadderModel drawn = model;
  std::mt19937_64 generator(StudySeed(text + " noise", study));
  for (auto& [label, noise] : drawn.label_noise) noise = ScaledByEstimateUncertainty(noise, generator);
  for (auto& [cell, noise] : drawn.gap_noise) noise = ScaledByEstimateUncertainty(noise, generator);
  return drawn;
}

// One cell per variant but the baseline and ladder point, without outcomes; `cell_at` finds them.
std::vector<PlanCell> EmptyCells(const std::vector<SyntheticVariant>& variants, const std::string& baseline,
                                 int seeds, const PlanSetting& setting,
                                 std::map<std::pair<std::string, std::string>, size_t>* cell_at) {
  std::vector<PlanCell> cells;
  for (const SyntheticVariant& variant : variants) {
    if (variant.name == baseline) continue;
    for (const auto& [label, compute] : variant.points) {
      PlanCell cell;
      cell.variant = variant.name;
      cell.label = label;
      cell.compute = compute;
      cell.multiplier = variant.multiplier;
      cell.seeds = seeds;
      cell.studies = setting.studies;
      (*cell_at)[{variant.name, label}] = cells.size();
      cells.push_back(cell);
    }
  }
  return cells;
}

// Cell `c`'s widths and power over the studies' outcomes.
void Summarise(const std::vector<std::vector<CellOutcome>>& outcomes, size_t c, PlanCell* cell) {
  std::vector<double> widths;
  int excluded = 0;
  for (const std::vector<CellOutcome>& study : outcomes) {
    if (study.empty() || !study[c].has_interval) continue;
    widths.push_back(study[c].width);
    if (study[c].excludes_one) ++excluded;
  }
  cell->with_interval = static_cast<int>(widths.size());
  cell->power = static_cast<double>(excluded) / cell->studies;
  if (!widths.empty()) {
    cell->width_median = Quantile(widths, 0.5);
    cell->width_p10 = Quantile(widths, 0.1);
    cell->width_p90 = Quantile(widths, 0.9);
  }
}

}  // namespace

StatusOr<std::vector<PlanCell>> SimulatePlan(const std::vector<SyntheticVariant>& variants,
                                             const std::string& baseline, int seeds, const PlanSetting& setting) {
  RUNG_RETURN_IF_ERROR(CheckSetting(variants, baseline, seeds, setting));
  SyntheticLadderModel model;
  model.baseline_law = setting.law;
  model.variants = variants;
  model.seeds = seeds;
  model.sigma = setting.sigma;
  model.rho = setting.rho;
  model.label_noise = setting.label_noise;
  model.baseline = baseline;
  model.gap_noise = setting.gap_noise;
  MultiplierOptions options;
  options.baseline = baseline;
  options.shared_e = setting.estimator == Estimator::kPowerLawSharedE;
  options.free_e = setting.estimator == Estimator::kPowerLawFreeE;
  options.e_sensitivity = false;
  options.bootstrap = 0;
  options.interval_level = setting.level;

  std::map<std::pair<std::string, std::string>, size_t> cell_at;
  std::vector<PlanCell> cells = EmptyCells(variants, baseline, seeds, setting, &cell_at);

  const std::string text = SettingText(variants, seeds, setting);
  std::vector<std::vector<CellOutcome>> outcomes(static_cast<size_t>(setting.studies));
  std::vector<Status> errors(static_cast<size_t>(setting.studies));
  std::atomic<int> next{0};
  auto work = [&]() {
    for (int study = next++; study < setting.studies; study = next++) {
      StatusOr<MultiplierReport> report =
          ComputeMultipliers(DrawSyntheticLadder(StudyModel(model, text, study), StudySeed(text, study)), options);
      if (!report.ok()) {
        errors[static_cast<size_t>(study)] = report.status();
        continue;
      }
      std::vector<CellOutcome>& mine = outcomes[static_cast<size_t>(study)];
      mine.assign(cells.size(), CellOutcome());
      for (const MultiplierRow& row : report->rows) {
        if (row.estimator != setting.estimator) continue;
        auto at = cell_at.find({row.variant, row.label});
        if (at == cell_at.end() || !row.interval) continue;
        CellOutcome& outcome = mine[at->second];
        const double m = cells[at->second].multiplier;
        outcome.has_interval = std::isfinite(row.interval->low) && std::isfinite(row.interval->high);
        if (!outcome.has_interval) continue;
        outcome.width = row.interval->high - row.interval->low;
        outcome.excludes_one = m > 1 ? row.interval->low > 1 : m < 1 ? row.interval->high < 1
                                                                   : row.interval->low > 1 || row.interval->high < 1;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::max(1, setting.threads); ++t) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
  // The first study that failed, whatever the threads' order.
  for (size_t study = 0; study < errors.size(); ++study) {
    if (errors[study].ok()) continue;
    return Status(errors[study].code(), "a simulated ladder (study " + std::to_string(study) +
                                            ") is not one the fit takes; the loss curve must stay well above the "
                                            "seed noise at every ladder point: " + errors[study].message());
  }

  for (size_t c = 0; c < cells.size(); ++c) Summarise(outcomes, c, &cells[c]);
  return cells;
}

StatusOr<std::vector<SeedsNeeded>> FindSeedsNeeded(const std::vector<SyntheticVariant>& variants,
                                                   const std::string& baseline, const PlanSetting& setting,
                                                   double power, std::optional<double> target_width, int max_seeds) {
  if (!(power > 0 && power <= 1)) return Status::InvalidArgument("the target power must be in (0, 1]");
  if (target_width && !(*target_width > 0)) return Status::InvalidArgument("the target width must be > 0");
  if (max_seeds < 2) return Status::InvalidArgument("the most seeds to try must be 2 or more");
  std::vector<SeedsNeeded> needed;
  for (int seeds = 2; seeds <= max_seeds; ++seeds) {
    RUNG_ASSIGN_OR_RETURN(std::vector<PlanCell> cells, SimulatePlan(variants, baseline, seeds, setting));
    if (needed.empty()) {
      for (const PlanCell& cell : cells) needed.push_back({cell.variant, cell.label, std::nullopt, cell});
    }
    bool all_met = true;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (needed[c].seeds) continue;
      const PlanCell& cell = cells[c];
      const bool width_met = !target_width || (cell.width_median && *cell.width_median <= *target_width);
      needed[c].at = cell;
      if (cell.power >= power && width_met)
        needed[c].seeds = seeds;
      else
        all_met = false;
    }
    if (all_met) break;
  }
  return needed;
}

}  // namespace rung::fit
