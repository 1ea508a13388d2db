#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/law_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "core/diagnostics/score_statistics.h"
#include "sweeps/fit/hermite.h"
#include "sweeps/fit/piecewise.h"
#include "sweeps/fit/student_t.h"

namespace rung::fit {
namespace {

constexpr int kMinReplicatesForInterval = 20;

std::string Num(double value, const char* format = "%.4g") {
  char text[48];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// The baseline's compute at a loss, or why there is none.
struct Inversion {
  std::optional<double> compute;
  std::string how;
  std::string why;
};

// Turns a loss into the baseline's compute for one estimator on one set of curves.
struct BaselineInverter {
  Estimator estimator = Estimator::kPiecewise;
  std::vector<CurvePoint> points;  // piecewise, hermite: the baseline's curve
  std::optional<PowerLaw> law;     // power laws: the baseline's fit
  std::optional<HermiteCurve> curve;  // piecewise, hermite: the curve through `points`
  std::string unavailable;         // why nothing can be inverted (the fit failed)

  // Whether LossAt is defined: a curve or a fitted law.
  bool Evaluable() const { return curve.has_value() || law.has_value(); }
  // The baseline's loss at compute x on the curve Invert inverts. REQUIRES: Evaluable().
  double LossAt(double x) const { return curve ? curve->At(x) : law->Predict(x); }

  Inversion Invert(double loss) const {
    if (!unavailable.empty()) return {std::nullopt, "", unavailable};
    if (!IsPowerLaw(estimator)) {
      PiecewiseInversion at =
          estimator == Estimator::kHermite ? InvertHermite(points, loss) : InvertPiecewise(points, loss);
      return {at.x, at.how, at.why};
    }
    std::optional<double> compute = law->ComputeAt(loss);
    if (!compute) {
      return {std::nullopt, "",
              "loss " + Num(loss, "%.4f") + " is at or below the baseline fit's E = " + Num(law->e, "%.4f") +
                  ": the fitted baseline never reaches it"};
    }
    return {compute, "", ""};
  }
};

using Curves = std::vector<std::vector<CurvePoint>>;  // one per variant, baseline first

std::optional<double> FixedEOf(Estimator estimator, std::optional<double> fixed_e) {
  return estimator == Estimator::kPowerLawFixedE ? fixed_e : std::nullopt;
}

// The fits of one power-law estimator: one joint fit for shared E, else each curve on its own (only
// the baseline's, curve 0, when baseline_only).
std::vector<FitSummary> FitAll(Estimator estimator, const Curves& curves, const std::vector<std::string>& variants,
                               std::optional<double> fixed_e, double c_ref, const PowerLawFitOptions& options,
                               bool baseline_only) {
  std::vector<FitSummary> fits(curves.size());
  for (size_t index = 0; index < curves.size(); ++index) {
    fits[index].variant = variants[index];
    fits[index].mode = estimator == Estimator::kPowerLawSharedE  ? EMode::kShared
                       : estimator == Estimator::kPowerLawFixedE ? EMode::kFixed
                                                                 : EMode::kFree;
  }
  if (estimator == Estimator::kPowerLawSharedE) {
    StatusOr<std::vector<PowerLawFit>> joint = FitPowerLawSharedE(curves, c_ref, options);
    for (size_t index = 0; index < curves.size(); ++index) {
      if (joint.ok())
        fits[index].fit = joint.value()[index];
      else
        fits[index].why = joint.status().message();
    }
    return fits;
  }
  size_t count = baseline_only ? 1 : curves.size();
  for (size_t index = 0; index < count; ++index) {
    StatusOr<PowerLawFit> fit = FitPowerLaw(curves[index], FixedEOf(estimator, fixed_e), c_ref, options);
    if (fit.ok())
      fits[index].fit = fit.value();
    else
      fits[index].why = fit.status().message();
  }
  return fits;
}

// The inverter of the piecewise or hermite estimator over the baseline's points.
BaselineInverter PiecewiseInverter(Estimator estimator, const std::vector<CurvePoint>& baseline) {
  BaselineInverter inverter;
  inverter.estimator = estimator;
  inverter.points = baseline;
  if (baseline.size() >= 2) inverter.curve = HermiteCurve(baseline, estimator == Estimator::kHermite);
  return inverter;
}

BaselineInverter PowerLawInverter(Estimator estimator, const FitSummary& baseline_fit) {
  BaselineInverter inverter;
  inverter.estimator = estimator;
  if (baseline_fit.fit)
    inverter.law = baseline_fit.fit->law;
  else
    inverter.unavailable = "the baseline's fit failed: " + baseline_fit.why;
  return inverter;
}

// The inverter of one estimator for a set of curves (used for seeds and bootstrap replicates).
BaselineInverter InverterFor(Estimator estimator, const Curves& curves, const std::vector<std::string>& variants,
                             std::optional<double> fixed_e, double c_ref, const PowerLawFitOptions& options) {
  if (!IsPowerLaw(estimator)) return PiecewiseInverter(estimator, curves[0]);
  if (estimator == Estimator::kPowerLawSharedE) {
    // Curves too short to fit are left out of the joint fit; the baseline is always curve 0.
    Curves usable = {curves[0]};
    std::vector<std::string> names = {variants[0]};
    for (size_t index = 1; index < curves.size(); ++index) {
      if (curves[index].size() >= 2) {
        usable.push_back(curves[index]);
        names.push_back(variants[index]);
      }
    }
    return PowerLawInverter(estimator, FitAll(estimator, usable, names, fixed_e, c_ref, options, true)[0]);
  }
  return PowerLawInverter(estimator, FitAll(estimator, curves, variants, fixed_e, c_ref, options, true)[0]);
}

SeedStats Stats(const std::vector<double>& values, int undefined) {
  SeedStats stats;
  stats.n = static_cast<int>(values.size());
  stats.undefined = undefined;
  if (values.empty()) return stats;
  double sum = 0;
  for (double value : values) sum += value;
  stats.mean = sum / stats.n;
  if (stats.n > 1) {
    double squares = 0;
    for (double value : values) squares += (value - stats.mean) * (value - stats.mean);
    stats.sd = std::sqrt(squares / (stats.n - 1));
  }
  return stats;
}

// Bootstrap refits: a few starts around the point estimate.
PowerLawFitOptions QuickFitOptions(const PowerLawFitOptions& full) {
  PowerLawFitOptions quick = full;
  quick.alpha_starts = {0.1, 0.3, 0.7};
  quick.e_start_fractions = {0.0, 0.5, 0.9};
  return quick;
}


// Per estimator, variant (baseline first) and ladder point: one value for each row of the report.
template <typename T>
using ByRow = std::map<Estimator, std::vector<std::vector<T>>>;

// What every estimate is computed from: the curves, baseline first, and the estimators asked for.
// A stratum of the seed jackknife (docs/science.md section 6.4): a ladder label and the seeds run at
// it, by any variant (its units).
struct LabelStratum {
  std::string label;
  std::vector<int64_t> seeds;  // ascending
};

struct FitInputs {
  std::vector<VariantCurve> curves;   // baseline first, then the ladder's order
  Curves mean_curves;                 // their seed-mean curves, in the same order
  std::set<int64_t> seed_ids;         // every seed of the ladder
  // Every label of the ladder with its seeds, by label order: ascending smallest compute at the label
  // (over the variants), ties in order of first appearance (the baseline's points first).
  std::vector<LabelStratum> strata;
  std::vector<Estimator> estimators;  // piecewise and hermite first, then the power laws asked for
  double c_ref = 1;                   // of the power-law parametrisation
};

// The point estimates of the seed-mean curves: per estimator, the baseline's inverter and (power
// laws) every variant's fit.
struct PointEstimates {
  std::map<Estimator, BaselineInverter> inverters;
  std::map<Estimator, std::vector<FitSummary>> fits;
};

// A ByRow<T> of `in`'s shape with every value `value`.
template <typename T>
ByRow<T> ShapedLike(const FitInputs& in, const T& value) {
  ByRow<T> shaped;
  for (Estimator estimator : in.estimators) {
    shaped[estimator].assign(in.curves.size(), {});
    for (size_t v = 0; v < in.curves.size(); ++v) shaped[estimator][v].assign(in.curves[v].points.size(), value);
  }
  return shaped;
}

// The report's fields that come from the ladder and the options as they are.
MultiplierReport ReportHeader(const LadderResults& ladder, const MultiplierOptions& options) {
  MultiplierReport report;
  report.source = ladder.source;
  report.baseline = options.baseline;
  report.has_seeds = ladder.has_seeds();
  report.has_seconds = ladder.has_seconds();
  report.bootstrap_replicates = options.bootstrap;
  report.bootstrap_seed = options.seed;
  report.power_law_residuals = options.fit.residuals;
  return report;
}

// The ladder's curves, the baseline's first; INVALID_ARGUMENT listing the variants when it has none
// of that name.
StatusOr<std::vector<VariantCurve>> CurvesBaselineFirst(const LadderResults& ladder, const std::string& baseline) {
  std::vector<VariantCurve> all = BuildCurves(ladder);
  auto baseline_it =
      std::find_if(all.begin(), all.end(), [&](const VariantCurve& curve) { return curve.variant == baseline; });
  if (baseline_it == all.end()) {
    std::string known;
    for (const VariantCurve& curve : all) known += (known.empty() ? "" : ", ") + curve.variant;
    return Status::InvalidArgument("baseline '" + baseline + "' is not a variant of " + ladder.source +
                                   " (variants: " + known + ")");
  }
  std::vector<VariantCurve> curves = {*baseline_it};
  for (const VariantCurve& curve : all) {
    if (curve.variant != baseline) curves.push_back(curve);
  }
  return curves;
}

// The ladder's labels as strata, by label order (FitInputs::strata).
std::vector<LabelStratum> StrataOf(const std::vector<VariantCurve>& curves) {
  struct Seen {
    double compute = 0;
    size_t first = 0;
    std::set<int64_t> seeds;
  };
  std::map<std::string, Seen> seen;
  for (const VariantCurve& curve : curves) {
    for (const LadderPoint& point : curve.points) {
      auto [it, added] = seen.try_emplace(point.label, Seen{point.compute, seen.size(), {}});
      it->second.compute = std::min(it->second.compute, point.compute);
      for (const auto& [seed, run] : point.seeds) it->second.seeds.insert(seed);
    }
  }
  std::vector<std::pair<std::string, const Seen*>> order;
  for (const auto& [label, at] : seen) order.emplace_back(label, &at);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->compute != b.second->compute ? a.second->compute < b.second->compute
                                                  : a.second->first < b.second->first;
  });
  std::vector<LabelStratum> strata;
  for (const auto& [label, at] : order) strata.push_back({label, {at->seeds.begin(), at->seeds.end()}});
  return strata;
}

// The inputs of the estimates from `curves` (baseline first) and the estimators `options` ask for; sets
// the report's variants, ladder points, most seeds and c_ref.
FitInputs FitInputsOf(std::vector<VariantCurve> curves, const MultiplierOptions& options, MultiplierReport* report) {
  FitInputs in;
  std::set<std::string> labels;
  double log_sum = 0;
  int point_count = 0;
  for (const VariantCurve& curve : curves) {
    report->variants.push_back(curve.variant);
    in.mean_curves.push_back(MeanCurve(curve));
    for (const LadderPoint& point : curve.points) {
      labels.insert(point.label);
      for (const auto& [seed, run] : point.seeds) in.seed_ids.insert(seed);
      report->max_seeds = std::max(report->max_seeds, static_cast<int>(point.seeds.size()));
      log_sum += std::log(point.compute);
      ++point_count;
    }
  }
  report->ladder_points = static_cast<int>(labels.size());
  report->c_ref = std::exp(log_sum / point_count);
  in.strata = StrataOf(curves);
  in.c_ref = report->c_ref;
  in.curves = std::move(curves);
  in.estimators = {Estimator::kPiecewise, Estimator::kHermite};
  if (options.shared_e) in.estimators.push_back(Estimator::kPowerLawSharedE);
  if (options.free_e) in.estimators.push_back(Estimator::kPowerLawFreeE);
  if (options.fixed_e) in.estimators.push_back(Estimator::kPowerLawFixedE);
  return in;
}

// The smallest seed-mean loss of `curve`.
double SmallestLoss(const VariantCurve& curve) {
  double smallest = std::numeric_limits<double>::infinity();
  for (const LadderPoint& point : curve.points) smallest = std::min(smallest, point.loss);
  return smallest;
}

// INVALID_ARGUMENT naming `what` unless `e` lies in [0, baseline_min_loss).
Status CheckE(double e, const std::string& what, double baseline_min_loss) {
  if (!std::isfinite(e) || e < 0 || e >= baseline_min_loss) {
    return Status::InvalidArgument(what + " " + Num(e) + " is outside [0, " + Num(baseline_min_loss, "%.4f") +
                                   "): E must be below the baseline's smallest seed-mean loss");
  }
  return Status::Ok();
}

// INVALID_ARGUMENT for options the ladder rules out; sets the report's E grid (the default one from
// the ladder's smallest loss).
Status CheckOptionsAgainstLadder(const std::vector<VariantCurve>& curves, const MultiplierOptions& options,
                                 MultiplierReport* report) {
  if (options.bootstrap < 0) return Status::InvalidArgument("bootstrap replicates must be >= 0");
  if (!(options.interval_level > 0 && options.interval_level < 1)) {
    return Status::InvalidArgument("interval level must be in (0, 1)");
  }
  const double baseline_min_loss = SmallestLoss(curves[0]);
  if (options.fixed_e) RUNG_RETURN_IF_ERROR(CheckE(*options.fixed_e, "fixed E", baseline_min_loss));
  if (!options.e_sensitivity) return Status::Ok();
  if (options.e_grid.empty()) {
    double min_mean_loss = std::numeric_limits<double>::infinity();
    for (const VariantCurve& curve : curves) min_mean_loss = std::min(min_mean_loss, SmallestLoss(curve));
    for (double fraction : {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95}) {
      report->e_grid.push_back(std::floor(fraction * min_mean_loss * 1000) / 1000);
    }
  } else {
    for (double e : options.e_grid) RUNG_RETURN_IF_ERROR(CheckE(e, "E grid value", baseline_min_loss));
    report->e_grid = options.e_grid;
  }
  return Status::Ok();
}

// Notes the ladder points where the baseline's seed-mean loss does not fall.
void NoteNonMonotoneBaseline(const std::vector<CurvePoint>& baseline_mean, MultiplierReport* report) {
  std::vector<std::string> steps = NonMonotoneSteps(baseline_mean);
  if (steps.empty()) return;
  std::string list;
  for (const std::string& step : steps) list += (list.empty() ? "" : ", ") + step;
  report->notes.push_back("the baseline " + report->baseline +
                          (report->max_seeds > 1 ? "'s seed-mean loss" : "'s loss") + " does not fall at " + list +
                          ": losses it reaches more than once have no piecewise multiplier");
}

// Fits the seed-mean curves by every estimator; adds the fits and their notes to the report.
PointEstimates FitPointEstimates(const FitInputs& in, const MultiplierOptions& options, MultiplierReport* report) {
  PointEstimates estimates;
  for (Estimator estimator : in.estimators) {
    if (!IsPowerLaw(estimator)) {
      estimates.inverters[estimator] = PiecewiseInverter(estimator, in.mean_curves[0]);
      continue;
    }
    std::vector<FitSummary>& fits = estimates.fits[estimator];
    fits = FitAll(estimator, in.mean_curves, report->variants, FixedEOf(estimator, options.fixed_e), in.c_ref,
                  options.fit, false);
    estimates.inverters[estimator] = PowerLawInverter(estimator, fits[0]);
    for (const FitSummary& summary : fits) {
      report->fits.push_back(summary);
      std::string what = std::string(EstimatorName(estimator)) + " fit of " + summary.variant;
      if (!summary.fit)
        report->notes.push_back(what + " failed: " + summary.why);
      else
        for (const std::string& note : summary.fit->notes) report->notes.push_back(what + ": " + note);
    }
  }
  return estimates;
}

// The row of `variant` at `point` by `estimator`: the multiplier where `inverter` reaches its loss.
MultiplierRow MakeRow(const std::string& variant, const LadderPoint& point, Estimator estimator,
                      const BaselineInverter& inverter) {
  MultiplierRow row;
  row.variant = variant;
  row.label = point.label;
  row.compute = point.compute;
  row.loss = point.loss;
  row.loss_sd = point.loss_sd;
  row.seeds = static_cast<int>(point.seeds.size());
  row.seconds = point.seconds;
  row.estimator = estimator;
  if (inverter.law) row.e = inverter.law->e;
  Inversion at = inverter.Invert(point.loss);
  if (at.compute) {
    row.baseline_compute = at.compute;
    row.multiplier = *at.compute / point.compute;
    row.how = at.how;
  } else {
    row.why = at.why;
  }
  return row;
}

// Adds the rows of the seed-mean curves, by estimator, variant and point; returns where each one is
// in report->rows.
ByRow<size_t> AddRows(const FitInputs& in, const PointEstimates& estimates, MultiplierReport* report) {
  ByRow<size_t> rows_at;
  for (Estimator estimator : in.estimators) {
    rows_at[estimator].resize(in.curves.size());
    for (size_t v = 0; v < in.curves.size(); ++v) {
      for (const LadderPoint& point : in.curves[v].points) {
        MultiplierRow row = MakeRow(in.curves[v].variant, point, estimator, estimates.inverters.at(estimator));
        if (IsPowerLaw(estimator)) {
          const std::vector<FitSummary>& own = estimates.fits.at(estimator);
          if (own[v].fit) row.fit_rmse = own[v].fit->rmse;
          if (own[0].fit) row.baseline_fit_rmse = own[0].fit->rmse;
          if (own[0].fit) row.baseline_fit_alpha = own[0].fit->law.alpha;
        }
        rows_at[estimator][v].push_back(report->rows.size());
        report->rows.push_back(std::move(row));
      }
    }
  }
  return rows_at;
}

// Sets every row's loss gap to the baseline at the same label, paired by seed (estimator-independent).
void SetLossGaps(const FitInputs& in, const ByRow<size_t>& rows_at, MultiplierReport* report) {
  for (size_t v = 0; v < in.curves.size(); ++v) {
    for (size_t p = 0; p < in.curves[v].points.size(); ++p) {
      const LadderPoint& point = in.curves[v].points[p];
      const LadderPoint* base = in.curves[0].Find(point.label);
      if (!base) continue;
      std::vector<double> gaps;
      for (const auto& [seed, run] : point.seeds) {
        auto base_run = base->seeds.find(seed);
        if (base_run != base->seeds.end()) gaps.push_back(run.loss - base_run->second.loss);
      }
      if (gaps.empty()) continue;
      SeedStats gap = Stats(gaps, 0);
      for (Estimator estimator : in.estimators) report->rows[rows_at.at(estimator)[v][p]].loss_gap = gap;
    }
  }
}

// Sets every row's paired multiplier: each seed's run against the baseline's curve of that seed,
// refitted with `refit` per estimator.
void SetPairedMultipliers(const FitInputs& in, const MultiplierOptions& options,
                          const std::map<Estimator, PowerLawFitOptions>& refit, const ByRow<size_t>& rows_at,
                          MultiplierReport* report) {
  ByRow<std::vector<double>> values = ShapedLike<std::vector<double>>(in, {});
  ByRow<int> undefined = ShapedLike<int>(in, 0);
  for (int64_t seed : in.seed_ids) {
    Curves seed_curves;
    for (const VariantCurve& curve : in.curves) seed_curves.push_back(SeedCurve(curve, seed));
    if (seed_curves[0].empty()) continue;  // the baseline has no run of this seed: nothing is paired
    for (Estimator estimator : in.estimators) {
      BaselineInverter inverter = InverterFor(estimator, seed_curves, report->variants,
                                              FixedEOf(estimator, options.fixed_e), in.c_ref, refit.at(estimator));
      for (size_t v = 0; v < in.curves.size(); ++v) {
        for (size_t p = 0; p < in.curves[v].points.size(); ++p) {
          const LadderPoint& point = in.curves[v].points[p];
          auto run = point.seeds.find(seed);
          if (run == point.seeds.end()) continue;
          Inversion at = inverter.Invert(run->second.loss);
          if (at.compute)
            values[estimator][v][p].push_back(*at.compute / point.compute);
          else
            ++undefined[estimator][v][p];
        }
      }
    }
  }
  for (Estimator estimator : in.estimators) {
    for (size_t v = 0; v < in.curves.size(); ++v) {
      for (size_t p = 0; p < in.curves[v].points.size(); ++p) {
        report->rows[rows_at.at(estimator)[v][p]].paired_multiplier =
            Stats(values[estimator][v][p], undefined[estimator][v][p]);
      }
    }
  }
}

// Sets the piecewise rows' wall-clock multiplier, over the baseline's seed-mean seconds.
void SetWallClockMultipliers(const FitInputs& in, const ByRow<size_t>& rows_at, MultiplierReport* report) {
  std::vector<CurvePoint> base_seconds = MeanSecondsCurve(in.curves[0]);
  for (size_t v = 0; v < in.curves.size(); ++v) {
    for (size_t p = 0; p < in.curves[v].points.size(); ++p) {
      MultiplierRow& row = report->rows[rows_at.at(Estimator::kPiecewise)[v][p]];
      PiecewiseInversion at = InvertPiecewise(base_seconds, row.loss);
      if (at.x && row.seconds)
        row.wallclock_multiplier = *at.x / *row.seconds;
      else
        row.wallclock_why = at.why;
    }
  }
}

// Why the one-seed ladder's rows get no bootstrap interval; "" when the runs bootstrap runs.
std::string NoBootstrapReason(const FitInputs& in, int bootstrap) {
  size_t min_points = std::numeric_limits<size_t>::max();
  for (const VariantCurve& curve : in.curves) min_points = std::min(min_points, curve.points.size());
  if (min_points < static_cast<size_t>(kMinBootstrapUnits)) {
    return "one seed and " + std::to_string(min_points) + " ladder points on a curve: an interval needs 2 seeds (or " +
           std::to_string(kMinBootstrapUnits) + " points per curve for the power laws' bootstrap)";
  }
  if (bootstrap == 0) return "one seed and no bootstrap requested";
  return "";
}

// The refit options per estimator: few starts, warm-started from the point estimates' fits.
std::map<Estimator, PowerLawFitOptions> WarmRefitOptions(const FitInputs& in, const PointEstimates& estimates,
                                                            const PowerLawFitOptions& full) {
  PowerLawFitOptions quick = QuickFitOptions(full);
  std::map<Estimator, PowerLawFitOptions> quick_for;
  for (Estimator estimator : in.estimators) {
    quick_for[estimator] = quick;
    if (!IsPowerLaw(estimator)) continue;
    const std::vector<FitSummary>& point_fits = estimates.fits.at(estimator);
    if (estimator == Estimator::kPowerLawSharedE) {
      // One joint warm start, when every curve was fitted.
      bool all =
          std::all_of(point_fits.begin(), point_fits.end(), [](const FitSummary& f) { return f.fit.has_value(); });
      if (all)
        for (const FitSummary& summary : point_fits) quick_for[estimator].warm_starts.push_back(summary.fit->law);
    } else if (point_fits[0].fit) {
      quick_for[estimator].warm_starts.push_back(point_fits[0].fit->law);  // the baseline's own fit
    }
  }
  return quick_for;
}

// The stratified jackknife's replicates (docs/science.md section 6.4): strata are the ladder's labels,
// units the seeds at each label. Replicate (l, s) is the seed-mean curves with seed s left out at
// label l only (every variant's point at l that has s; every other point as it is) and, per
// estimator, the baseline's curve on them (power laws refitted with `refit`).
struct SeedLeftOut {
  int64_t seed = 0;
  Curves without;
  std::map<Estimator, BaselineInverter> inverters;
};
struct StratumLeftOut {
  std::string label;
  std::vector<SeedLeftOut> replicates;  // one per seed of the stratum, ascending
};

// `mean` (the seed-mean curve of `curve`, point for point) with `seed` left out at `label` only: the
// point there is the mean of its other seeds, or is left out when it has no other; every other point is
// `mean`'s own (the same doubles, so that a curve the replicate does not touch is the same curve).
std::vector<CurvePoint> MeanCurveWithoutAt(const VariantCurve& curve, const std::vector<CurvePoint>& mean,
                                           const std::string& label, int64_t seed) {
  std::vector<CurvePoint> points;
  for (size_t p = 0; p < curve.points.size(); ++p) {
    const LadderPoint& point = curve.points[p];
    if (point.label != label || point.seeds.count(seed) == 0) {
      points.push_back(mean[p]);
      continue;
    }
    if (std::optional<double> without = PointMeanWithout(point, seed)) points.push_back({point.compute, *without, point.label});
  }
  return points;
}

// Whether `estimator`'s baseline curve is built from the same data in `without` as in `mean`: the
// baseline's curve for every estimator but shared E, whose joint fit takes every curve.
bool SameBaselineData(Estimator estimator, const Curves& without, const Curves& mean) {
  auto same = [](const std::vector<CurvePoint>& a, const std::vector<CurvePoint>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].x != b[i].x || a[i].loss != b[i].loss) return false;
    }
    return true;
  };
  if (estimator != Estimator::kPowerLawSharedE) return same(without[0], mean[0]);
  for (size_t v = 0; v < mean.size(); ++v) {
    if (!same(without[v], mean[v])) return false;
  }
  return true;
}

// Every replicate (l, s), by stratum in label order. A replicate that leaves the baseline's data as it
// is takes the point estimate's curve (no refit): its gaps are the point estimate's exactly.
std::vector<StratumLeftOut> LeaveOneSeedOutByLabel(const FitInputs& in, const PointEstimates& estimates,
                                                   const MultiplierOptions& options,
                                                   const std::map<Estimator, PowerLawFitOptions>& refit,
                                                   const std::vector<std::string>& variants) {
  std::vector<StratumLeftOut> left_out;
  for (const LabelStratum& stratum : in.strata) {
    StratumLeftOut replicates;
    replicates.label = stratum.label;
    for (int64_t seed : stratum.seeds) {
      SeedLeftOut replicate;
      replicate.seed = seed;
      for (size_t v = 0; v < in.curves.size(); ++v) {
        replicate.without.push_back(MeanCurveWithoutAt(in.curves[v], in.mean_curves[v], stratum.label, seed));
      }
      for (Estimator estimator : in.estimators) {
        replicate.inverters[estimator] =
            SameBaselineData(estimator, replicate.without, in.mean_curves)
                ? estimates.inverters.at(estimator)
                : InverterFor(estimator, replicate.without, variants, FixedEOf(estimator, options.fixed_e), in.c_ref,
                              refit.at(estimator));
      }
      replicates.replicates.push_back(std::move(replicate));
    }
    left_out.push_back(std::move(replicates));
  }
  return left_out;
}

// "95" for an interval level of 0.95, as the report's header names it.
std::string LevelPercent(double level) { return std::to_string(static_cast<int>(std::lround(100 * level))); }

// One stratum's defined replicates for one row: the row's loss and the baseline's curve in each.
struct GapStratumReplicates {
  std::string label;
  std::vector<double> losses;                   // L with seed s left out at the label, per defined replicate
  std::vector<const BaselineInverter*> curves;  // B the same

  // G_(l,s) at compute x for replicate i.
  double Gap(size_t i, double x) const { return losses[i] - curves[i]->LossAt(x); }
  // V_l = (m - 1) / m sum_s (G_(l,s) - mean_s G_(l,s))^2 at compute x, m the defined replicates.
  double Variance(double x) const {
    const double m = static_cast<double>(losses.size());
    double mean = 0;
    for (size_t i = 0; i < losses.size(); ++i) mean += Gap(i, x);
    mean /= m;
    double squares = 0;
    for (size_t i = 0; i < losses.size(); ++i) squares += (Gap(i, x) - mean) * (Gap(i, x) - mean);
    return (m - 1) / m * squares;
  }
};

// The loss gap of one row as a function of theta = ln CM, with its stratified jackknife
// (docs/science.md section 6.4):
//   G(theta)       = L - B(e^theta C), L the variant's seed-mean loss at the row's point, C its compute,
//                    B the estimator's baseline curve; the row's multiplier is where G = 0;
//   G_(l,s)(theta) the same from the seed-mean curves with seed s left out at label l only (B
//                  refitted for a power law);
//   V_l(theta)     = (m_l - 1) / m_l sum_s (G_(l,s) - mean_s G_(l,s))^2, se^2 = sum_l V_l;
//   T(theta)       = G(theta) / se(theta).
// At a fixed theta G is a smooth function of the seed means of every label (linear for the piecewise
// estimator, where V_l is the variance of the mean of label l's per-seed contributions exactly), and
// labels are independent strata, so T is close to Student's t on the Welch-Satterthwaite degrees of
// freedom at the true CM.
struct GapJackknife {
  double compute = 0;
  double loss = 0;
  const BaselineInverter* curve = nullptr;
  std::vector<GapStratumReplicates> strata;  // those with 2+ defined replicates, by label order

  double X(double theta) const { return std::exp(theta) * compute; }
  double Gap(double theta) const { return loss - curve->LossAt(X(theta)); }
  std::vector<double> Variances(double theta) const {
    std::vector<double> variances;
    for (const GapStratumReplicates& stratum : strata) variances.push_back(stratum.Variance(X(theta)));
    return variances;
  }
  double T(double theta) const {
    const double gap = Gap(theta);
    double se2 = 0;
    for (double variance : Variances(theta)) se2 += variance;
    const double se = std::sqrt(se2);
    if (se == 0) return gap == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), gap);
    return gap / se;
  }
};


// How far from ln CM the interval's ends are searched (an end not found by then is open), and the
// search's steps: kGapFineStep within kGapFineReach of ln CM, then each kGapStepGrowth times the last.
constexpr double kGapReach = 20;
constexpr double kGapFineStep = 0.01;
constexpr double kGapFineReach = 1;
constexpr double kGapStepGrowth = 1.05;

// The steps by which the interval's ends are searched outward from a centre: kGapFineStep out to
// kGapFineReach, then each kGapStepGrowth times the last, until they reach kGapReach. Built once.
const std::vector<double>& GapSteps() {
  static const std::vector<double> steps = [] {
    std::vector<double> built;
    double offset = 0, step = kGapFineStep;
    while (offset < kGapReach) {
      if (offset >= kGapFineReach) step *= kGapStepGrowth;
      built.push_back(step);
      offset += step;
    }
    return built;
  }();
  return steps;
}

// The grid GapHullOf searches around its centre: 0 and the offsets GapSteps reach (the last at
// kGapReach) on both sides, ascending.
std::vector<double> GapGrid() {
  std::vector<double> side;
  double theta = 0;
  for (double step : GapSteps()) {
    theta = std::min(theta + step, kGapReach);
    side.push_back(theta);
  }
  std::vector<double> grid;
  for (auto it = side.rbegin(); it != side.rend(); ++it) grid.push_back(-*it);
  grid.push_back(0);
  grid.insert(grid.end(), side.begin(), side.end());
  return grid;
}

// Where |T| crosses t between an accepted theta and a rejected one, by bisection.
double GapCrossing(const GapJackknife& gap, double t, double accepted, double rejected) {
  for (int i = 0; i < 60 && std::fabs(rejected - accepted) > 1e-10; ++i) {
    const double mid = 0.5 * (accepted + rejected);
    (std::fabs(gap.T(mid)) > t ? rejected : accepted) = mid;
  }
  return 0.5 * (accepted + rejected);
}

// The end of the accepted stretch of {theta : |T(theta)| <= t} that starts at `from` (accepted) and
// runs in `direction` (+1, -1) by GapSteps: where |T| first exceeds t, by bisection inside the first
// rejected step; empty when nothing within kGapReach is rejected.
std::optional<double> GapEnd(const GapJackknife& gap, double t, double from, int direction) {
  double accepted = from;
  for (double step : GapSteps()) {
    const double next = accepted + direction * step;
    if (std::fabs(gap.T(next)) > t) return GapCrossing(gap, t, accepted, next);
    accepted = next;
  }
  return std::nullopt;
}

// An interval of theta and whether each end is open (not found within kGapReach).
struct GapHull {
  double low = 0, high = 0;
  bool open_below = false, open_above = false;
};
// The hull of {theta : |T(theta)| <= t} on GapGrid around `centre`, its ends refined by bisection;
// an end at the grid's edge is open. Empty when every theta on the grid is rejected. For a row
// without a multiplier (its seed-mean loss does not invert on the baseline's curve; centre 0) and
// for 2 seeds.
std::optional<GapHull> GapHullOf(const GapJackknife& gap, double t, double centre) {
  std::vector<double> grid = GapGrid();
  for (double& theta : grid) theta += centre;
  std::optional<size_t> first, last;
  for (size_t i = 0; i < grid.size(); ++i) {
    if (std::fabs(gap.T(grid[i])) <= t) {
      if (!first) first = i;
      last = i;
    }
  }
  if (!first) return std::nullopt;
  GapHull hull;
  hull.open_below = *first == 0;
  hull.open_above = *last == grid.size() - 1;
  hull.low = hull.open_below ? grid.front() : GapCrossing(gap, t, grid[*first], grid[*first - 1]);
  hull.high = hull.open_above ? grid.back() : GapCrossing(gap, t, grid[*last], grid[*last + 1]);
  return hull;
}

// Whether the power-law estimator's baseline fit has E at its upper bound (false for the others).
bool BaselineFitAtUpperE(const PointEstimates& estimates, Estimator estimator) {
  auto fits = estimates.fits.find(estimator);
  return fits != estimates.fits.end() && fits->second[0].fit && fits->second[0].fit->e_at_upper_bound;
}

// One row's interval over the seeds: the stretch of CM around the estimate that the stratified
// jackknife t test of the loss gap does not reject (the test inverted), with its degrees of freedom by
// Welch-Satterthwaite at the estimate, and the p of CM = 1 (but for the baseline's rows); a note
// instead where it has none (a label the row depends on whose seeds cannot be left out, and where a
// power law's E sits at its upper bound).
void SetGapInterval(const std::vector<StratumLeftOut>& left_out, const LadderPoint& point,
                    const VariantCurve& baseline, const BaselineInverter& inverter, bool e_at_upper_bound,
                    Estimator estimator, size_t v, double level, bool satterthwaite, MultiplierRow* row) {
  if (v == 0 && !IsPowerLaw(estimator)) {
    row->interval_note = "the baseline against its own curve: 1 by construction";
    return;
  }
  if (!inverter.Evaluable()) {
    row->interval_note = "no multiplier";
    return;
  }
  if (e_at_upper_bound) {
    row->interval_note =
        "no interval: the fit's E sits at its upper bound, the smallest loss, where the fit is not smooth "
        "in the data and the seeds' jackknife does not measure its spread";
    return;
  }
  GapJackknife gap;
  gap.compute = point.compute;
  gap.loss = point.loss;
  gap.curve = &inverter;
  // Where the degrees of freedom are decided, and a row's dependence on a label checked: the estimate,
  // or CM = 1 (the hull's centre) for a row without a multiplier.
  const double centre = row->multiplier ? std::log(*row->multiplier) : 0.0;
  const double gap_at_centre = gap.Gap(centre);
  int undefined = 0;
  for (const StratumLeftOut& stratum : left_out) {
    GapStratumReplicates replicates;
    replicates.label = stratum.label;
    int stratum_undefined = 0;
    for (const SeedLeftOut& replicate : stratum.replicates) {
      const std::vector<CurvePoint>& without = replicate.without[v];
      auto at_label = std::find_if(without.begin(), without.end(),
                                   [&](const CurvePoint& other) { return other.label == point.label; });
      const BaselineInverter& curve = replicate.inverters.at(estimator);
      if (at_label == without.end() || !curve.Evaluable()) {
        ++stratum_undefined;
        continue;
      }
      replicates.losses.push_back(at_label->loss);
      replicates.curves.push_back(&curve);
    }
    if (replicates.losses.size() >= 2) {
      undefined += stratum_undefined;
      gap.strata.push_back(std::move(replicates));
      continue;
    }
    // Fewer than two seeds of this label can be left out: its noise is not measured. That is harmless
    // only where the row's gap does not depend on the label (leaving its seed out changes nothing).
    bool depends = stratum_undefined > 0;
    for (size_t i = 0; i < replicates.losses.size(); ++i) {
      depends = depends || replicates.Gap(i, gap.X(centre)) != gap_at_centre;
    }
    if (!depends) continue;
    row->interval_note =
        stratum.replicates.size() == 1
            ? "label " + stratum.label + " has one seed: its noise is not measured"
            : "label " + stratum.label + ": only " + std::to_string(replicates.losses.size()) + " of its " +
                  std::to_string(stratum.replicates.size()) +
                  " seeds can be left out (without the others the row is undefined): its noise is not measured";
    return;
  }
  const std::vector<double> variances = gap.Variances(centre);
  double se2 = 0;
  size_t largest = 0;
  int units = 0;
  std::vector<GapStratum> decomposition;
  // A label's seeds as the row reads them: where variants ran different seeds there (an aim added seeds
  // for one variant and the baseline), the fewest of the points that enter the gap, the baseline's and,
  // at the row's own label, the row's. V_l counts every seed of the label (which only overstates it);
  // the degrees of freedom may not.
  std::vector<int> seeds_read(gap.strata.size());
  for (size_t l = 0; l < gap.strata.size(); ++l) {
    int m = static_cast<int>(gap.strata[l].losses.size());
    if (const LadderPoint* base = baseline.Find(gap.strata[l].label)) m = std::min(m, static_cast<int>(base->seeds.size()));
    if (gap.strata[l].label == point.label) m = std::min(m, static_cast<int>(point.seeds.size()));
    seeds_read[l] = std::max(m, 1);
  }
  for (size_t l = 0; l < gap.strata.size(); ++l) {
    if (!(variances[l] > 0)) continue;
    se2 += variances[l];
    if (variances[l] > variances[largest] || !(variances[largest] > 0)) largest = l;
    units += seeds_read[l];
    decomposition.push_back({gap.strata[l].label, seeds_read[l], variances[l]});
  }
  if (!(se2 > 0) || !std::isfinite(se2)) {
    row->interval_note = std::string("the leave-one-seed-out gaps do not vary at ") +
                         (row->multiplier ? "the estimate" : "CM = 1") + ": no spread to test against";
    return;
  }
  const double df = GapDegreesOfFreedom(decomposition, satterthwaite);
  const int largest_seeds = seeds_read[largest];
  const double t = -StudentTQuantile(0.5 * (1 - level), df);  // 1 - level is exact, (1 + level) / 2 rounds
  std::optional<GapHull> stretch;
  // Where the label carrying most of se^2 has 2 seeds, its V_l is one difference, which passes through
  // 0 wherever its two seeds' gap curves cross: |T| spikes there, and a stretch stopped at a spike
  // leaves out CM the test accepts beyond it. There (and below 2 df) the interval is the hull (wider;
  // valid).
  const bool hull = !row->multiplier || largest_seeds == 2 || df < 2;
  if (!hull) {
    const std::optional<double> low = GapEnd(gap, t, centre, -1), high = GapEnd(gap, t, centre, +1);
    stretch = GapHull{low.value_or(centre - kGapReach), high.value_or(centre + kGapReach), !low, !high};
  } else {
    stretch = GapHullOf(gap, t, centre);
    if (!stretch) {
      row->interval_note = "the seeds reject every CM within e^" + Num(kGapReach, "%.0f") + " of " +
                           (row->multiplier ? "the estimate" : "1");
      return;
    }
  }
  Interval interval;
  interval.level = level;
  interval.construction = "jackknife gap t";
  interval.unit = "seeds";
  interval.units = units;
  interval.df = df;
  interval.low = std::exp(stretch->low);
  interval.high = std::exp(stretch->high);
  interval.open = stretch->open_below || stretch->open_above;
  row->interval = interval;
  row->gap_strata = std::move(decomposition);
  std::vector<std::string> notes;
  if (!row->multiplier) {
    notes.push_back("no multiplier: the hull of every CM the seeds do not reject");
  } else if (largest_seeds == 2) {
    notes.push_back("2 seeds at " + gap.strata[largest].label +
                    " (the most of the gap's variance): the hull of every CM the seeds do not reject");
  } else if (hull) {
    notes.push_back(Num(df, "%.2g") + " degrees of freedom: the hull of every CM the seeds do not reject");
  }
  if (stretch->open_below || stretch->open_above) {
    notes.push_back(std::string("open ") +
                    (stretch->open_below && stretch->open_above ? "on both sides"
                     : stretch->open_below                      ? "below"
                                                                : "above") +
                    ": the seeds do not bound CM within e^" + Num(kGapReach, "%.0f") +
                    (row->multiplier ? " of the estimate" : ""));
  }
  if (undefined > 0) {
    notes.push_back(std::to_string(undefined) + " leave-one-seed-out replicate(s) whose curve is undefined left out");
  }
  for (const std::string& note : notes) row->interval_note += (row->interval_note.empty() ? "" : "; ") + note;
  const double at_one = gap.T(0);
  if (v != 0 && std::isfinite(at_one)) row->p_value = StudentTTwoSidedPValue(at_one, df);
}


// Sets every row's interval over the seeds (the stratified jackknife), its p of CM = 1 and, per
// estimator, the p's Holm adjustment over the rows of every variant but the baseline.
void SetSeedIntervals(const FitInputs& in, const PointEstimates& estimates, const MultiplierOptions& options,
                      const std::map<Estimator, PowerLawFitOptions>& refit, const ByRow<size_t>& rows_at,
                      MultiplierReport* report) {
  size_t fewest = std::numeric_limits<size_t>::max(), most = 0;
  std::vector<std::string> two_seed_labels;
  for (const LabelStratum& stratum : in.strata) {
    fewest = std::min(fewest, stratum.seeds.size());
    most = std::max(most, stratum.seeds.size());
    if (stratum.seeds.size() == 2) two_seed_labels.push_back(stratum.label);
  }
  const std::string per_label =
      fewest == most ? std::to_string(most) + " seeds at every label"
                     : std::to_string(fewest) + " to " + std::to_string(most) + " seeds per label";
  report->intervals =
      LevelPercent(options.interval_level) +
      "% stratified jackknife gap t intervals (strata: the " + std::to_string(in.strata.size()) +
      " ladder labels; units: the seeds within each label, " + per_label +
      (options.satterthwaite_df
           ? "; degrees of freedom per row by Welch-Satterthwaite"
           : "; degrees of freedom per row: the fewest seeds less one among the labels with " +
                 Num(100 * kDfShare, "%.0f") +
                 "% or more of the gap's variance, a conservative Welch-Satterthwaite") +
      "): every CM around the estimate at which the "
      "variant's loss gap to the baseline's curve, L - B(CM x C), is within t standard errors of 0, se^2 the "
      "sum over labels of the jackknife variance from leaving each of the label's seeds out there only; it "
      "assumes a seed's runs at different labels are independent (the pairing is within a label: the "
      "variants' runs of one seed at one label share data order and initialisation); p: the same t at CM = "
      "1, Holm-adjusted over each estimator's rows";
  if (!two_seed_labels.empty()) {
    const std::string t1 = Num(StudentTQuantile(0.5 + options.interval_level / 2, 1), "%.1f");
    if (two_seed_labels.size() == in.strata.size()) {
      report->notes.push_back("2 seeds at every label: an interval whose gap varies mostly with one label's seeds "
                              "rests on about one degree of freedom (t = " + t1 +
                              " at this level), so it is wide; a third seed at that label narrows it most");
    } else {
      std::string list;
      for (const std::string& label : two_seed_labels) list += (list.empty() ? "" : ", ") + label;
      report->notes.push_back("2 seeds at " + list +
                              ": an interval whose gap varies mostly with such a label's seeds rests on about one "
                              "degree of freedom (t = " + t1 +
                              " at this level), so it is wide; a third seed there narrows it most");
    }
  }
  const std::vector<StratumLeftOut> left_out =
      LeaveOneSeedOutByLabel(in, estimates, options, refit, report->variants);
  for (Estimator estimator : in.estimators) {
    std::vector<size_t> family;
    std::vector<double> p_values;
    for (size_t v = 0; v < in.curves.size(); ++v) {
      for (size_t p = 0; p < in.curves[v].points.size(); ++p) {
        MultiplierRow& row = report->rows[rows_at.at(estimator)[v][p]];
        SetGapInterval(left_out, in.curves[v].points[p], in.curves[0], estimates.inverters.at(estimator),
                       BaselineFitAtUpperE(estimates, estimator), estimator, v, options.interval_level,
                       options.satterthwaite_df, &row);
        if (row.p_value) {
          family.push_back(rows_at.at(estimator)[v][p]);
          p_values.push_back(*row.p_value);
        }
      }
    }
    const std::vector<double> adjusted = HolmAdjust(p_values);
    for (size_t index = 0; index < family.size(); ++index) report->rows[family[index]].p_holm = adjusted[index];
  }
}


// One bootstrap replicate: the resampled curves to fit, and per variant and point the loss to invert.
struct Replicate {
  Curves curves;
  std::vector<std::vector<double>> loss;
};

// A replicate of each curve's points drawn with replacement; the losses inverted are the measured ones.
Replicate DrawRuns(const std::vector<VariantCurve>& curves, std::mt19937_64& generator) {
  Replicate replicate{Curves(curves.size()), std::vector<std::vector<double>>(curves.size())};
  for (size_t v = 0; v < curves.size(); ++v) {
    std::uniform_int_distribution<size_t> pick(0, curves[v].points.size() - 1);
    for (size_t draw = 0; draw < curves[v].points.size(); ++draw) {
      const LadderPoint& point = curves[v].points[pick(generator)];
      replicate.curves[v].push_back({point.compute, point.loss, point.label});
    }
    for (const LadderPoint& point : curves[v].points) replicate.loss[v].push_back(point.loss);
  }
  return replicate;
}

// Adds the multipliers a replicate defines to `samples`, by each power-law estimator.
void AddReplicateSamples(const FitInputs& in, const Replicate& replicate,
                         const std::map<Estimator, PowerLawFitOptions>& quick_for, const MultiplierOptions& options,
                         const std::vector<std::string>& variants, ByRow<std::vector<double>>* samples) {
  for (Estimator estimator : in.estimators) {
    if (!IsPowerLaw(estimator)) continue;
    BaselineInverter inverter = InverterFor(estimator, replicate.curves, variants,
                                            FixedEOf(estimator, options.fixed_e), in.c_ref, quick_for.at(estimator));
    for (size_t v = 0; v < in.curves.size(); ++v) {
      for (size_t p = 0; p < in.curves[v].points.size(); ++p) {
        Inversion at = inverter.Invert(replicate.loss[v][p]);
        if (at.compute) (*samples)[estimator][v].at(p).push_back(*at.compute / in.curves[v].points[p].compute);
      }
    }
  }
}

// Sets a row's percentile interval from its replicates' multipliers, or says why not;
// `units`: the runs of the row's curve.
void SetInterval(const std::vector<double>& values, int drawn, int units, double level, MultiplierRow* row) {
  int missing = drawn - static_cast<int>(values.size());
  if (static_cast<int>(values.size()) < kMinReplicatesForInterval) {
    row->interval_note =
        "only " + std::to_string(values.size()) + " of " + std::to_string(drawn) + " bootstrap replicates defined";
    return;
  }
  Interval interval;
  interval.level = level;
  interval.construction = "percentile bootstrap";
  interval.unit = "runs";
  interval.units = units;
  interval.replicates = static_cast<int>(values.size());
  interval.low = Quantile(values, (1 - level) / 2);
  interval.high = Quantile(values, 1 - (1 - level) / 2);
  row->interval = interval;
  if (missing > 0) {
    row->interval_note = std::to_string(missing) + " of " + std::to_string(drawn) + " replicates undefined";
  }
}

// One-seed ladders: runs the runs bootstrap's replicates and sets the power-law rows' intervals (or
// every row's reason for none); stops with options.keep_going's status when that is not OK.
Status SetBootstrapIntervals(const FitInputs& in, const PointEstimates& estimates, const MultiplierOptions& options,
                             const ByRow<size_t>& rows_at, MultiplierReport* report) {
  const std::string no_interval = NoBootstrapReason(in, options.bootstrap);
  if (!no_interval.empty()) {
    for (MultiplierRow& row : report->rows) row.interval_note = no_interval;
    return Status::Ok();
  }
  report->bootstrap_unit = "runs";
  report->intervals = LevelPercent(options.interval_level) +
                      "% percentile bootstrap, " + std::to_string(options.bootstrap) +
                      " replicates resampling the runs of each curve (seed " + std::to_string(options.seed) +
                      "); power laws only";
  report->notes.push_back(
      "one run per ladder point: the bootstrap resamples ladder points of each curve, which gives intervals for "
      "the power-law fits only; seeds give every estimator an interval");
  const std::map<Estimator, PowerLawFitOptions> quick_for = WarmRefitOptions(in, estimates, options.fit);
  std::mt19937_64 generator(options.seed);
  ByRow<std::vector<double>> samples = ShapedLike<std::vector<double>>(in, {});
  for (int replicate = 0; replicate < options.bootstrap; ++replicate) {
    if (options.keep_going) RUNG_RETURN_IF_ERROR(options.keep_going());
    AddReplicateSamples(in, DrawRuns(in.curves, generator), quick_for, options, report->variants, &samples);
  }
  for (Estimator estimator : in.estimators) {
    for (size_t v = 0; v < in.curves.size(); ++v) {
      for (size_t p = 0; p < in.curves[v].points.size(); ++p) {
        MultiplierRow& row = report->rows[rows_at.at(estimator)[v][p]];
        if (!IsPowerLaw(estimator)) {
          row.interval_note = std::string("one run per ladder point: the ") + EstimatorName(estimator) +
                              " estimator has nothing to resample";
          continue;
        }
        SetInterval(samples[estimator][v][p], options.bootstrap, static_cast<int>(in.curves[v].points.size()),
                    options.interval_level, &row);
      }
    }
  }
  return Status::Ok();
}

// Adds the E-sensitivity rows: the baseline fitted at each fixed E of the report's grid; stops with
// options.keep_going's status when that is not OK.
Status AddESensitivity(const FitInputs& in, const MultiplierOptions& options, MultiplierReport* report) {
  for (double e : report->e_grid) {
    if (options.keep_going) RUNG_RETURN_IF_ERROR(options.keep_going());
    StatusOr<PowerLawFit> fit = FitPowerLaw(in.mean_curves[0], e, in.c_ref, options.fit);
    FitSummary summary;
    summary.variant = options.baseline;
    summary.mode = EMode::kFixed;
    if (fit.ok())
      summary.fit = fit.value();
    else
      summary.why = fit.status().message();
    report->e_grid_baseline_rmse.push_back(fit.ok() ? std::optional<double>(fit->rmse) : std::nullopt);
    report->e_grid_baseline_alpha.push_back(fit.ok() ? std::optional<double>(fit->law.alpha) : std::nullopt);
    BaselineInverter inverter = PowerLawInverter(Estimator::kPowerLawFixedE, summary);
    for (const VariantCurve& curve : in.curves) {
      for (const LadderPoint& point : curve.points) {
        MultiplierRow row = MakeRow(curve.variant, point, Estimator::kPowerLawFixedE, inverter);
        row.e = e;
        if (fit.ok()) row.baseline_fit_rmse = fit->rmse;
        if (fit.ok()) row.baseline_fit_alpha = fit->law.alpha;
        report->e_sensitivity.push_back(std::move(row));
      }
    }
  }
  return Status::Ok();
}

// Notes each label of a variant the baseline has no run at (such rows have no loss gap).
void NoteLabelsTheBaselineLacks(const std::vector<VariantCurve>& curves, MultiplierReport* report) {
  for (size_t v = 1; v < curves.size(); ++v) {
    for (const LadderPoint& point : curves[v].points) {
      if (!curves[0].Find(point.label)) {
        report->notes.push_back(curves[v].variant + " at " + point.label +
                                ": the baseline has no run at that label, "
                                "so no loss gap (the multiplier does not need one)");
      }
    }
  }
}

}  // namespace

bool SeedMeanFitsAreLeastSquares(const MultiplierReport& report) { return report.has_seeds && report.max_seeds > 1; }

const char* EstimatorName(Estimator estimator) {
  switch (estimator) {
    case Estimator::kPiecewise:
      return "piecewise";
    case Estimator::kHermite:
      return "hermite";
    case Estimator::kPowerLawSharedE:
      return "power_law_shared_e";
    case Estimator::kPowerLawFreeE:
      return "power_law_free_e";
    case Estimator::kPowerLawFixedE:
      return "power_law_fixed_e";
  }
  return "?";
}

bool IsPowerLaw(Estimator estimator) {
  return estimator != Estimator::kPiecewise && estimator != Estimator::kHermite;
}

Status CheckBootstrapReplicates(int64_t replicates) {
  if (replicates <= kMaxBootstrapReplicates) return Status::Ok();
  return Status::InvalidArgument("bootstrap: " + std::to_string(replicates) +
                                 " replicates are more than the fixed limit of " +
                                 std::to_string(kMaxBootstrapReplicates) + " (sweeps/fit/compute_multipliers.h)");
}

double GapDegreesOfFreedom(const std::vector<GapStratum>& strata, bool satterthwaite) {
  // Welch-Satterthwaite: the df of a chi-square whose first two moments match sum_l V_l's, each V_l on
  // m_l - 1 df. With few seeds per label the V_l are noisy and the df so estimated run high (the
  // intervals covered too little at 3 seeds per label), so by default the df are the conservative
  // smallest m_l - 1 among the labels that carry at least kDfShare of se^2.
  double se2 = 0, denominator = 0;
  for (const GapStratum& stratum : strata) {
    if (!(stratum.variance > 0) || stratum.seeds < 2) continue;
    se2 += stratum.variance;
    denominator += stratum.variance * stratum.variance / (stratum.seeds - 1);
  }
  if (!(se2 > 0)) return 0;
  if (satterthwaite) return se2 * se2 / denominator;
  double df = std::numeric_limits<double>::infinity(), fewest = df;
  for (const GapStratum& stratum : strata) {
    if (!(stratum.variance > 0) || stratum.seeds < 2) continue;
    fewest = std::min(fewest, static_cast<double>(stratum.seeds - 1));
    if (stratum.variance >= kDfShare * se2) df = std::min(df, static_cast<double>(stratum.seeds - 1));
  }
  // No label with kDfShare of it (many labels sharing it evenly): the fewest of them all.
  return std::isfinite(df) ? df : fewest;
}

StatusOr<MultiplierReport> ComputeMultipliers(const LadderResults& ladder, const MultiplierOptions& asked) {
  RUNG_RETURN_IF_ERROR(CheckBootstrapReplicates(asked.bootstrap));
  MultiplierOptions options = asked;
  RUNG_RETURN_IF_ERROR(ValidateLadderResults(ladder));
  MultiplierReport report = ReportHeader(ladder, options);
  RUNG_ASSIGN_OR_RETURN(std::vector<VariantCurve> curves, CurvesBaselineFirst(ladder, options.baseline));
  const FitInputs in = FitInputsOf(std::move(curves), options, &report);
  RUNG_RETURN_IF_ERROR(CheckOptionsAgainstLadder(in.curves, options, &report));
  if (SeedMeanFitsAreLeastSquares(report) || options.fit.residuals == PowerLawResiduals::kNats) {
    options.fit.huber_delta.reset();
  }

  NoteNonMonotoneBaseline(in.mean_curves[0], &report);
  const PointEstimates estimates = FitPointEstimates(in, options, &report);
  const ByRow<size_t> rows_at = AddRows(in, estimates, &report);
  SetLossGaps(in, rows_at, &report);
  if (report.has_seconds) SetWallClockMultipliers(in, rows_at, &report);
  if (report.has_seeds && report.max_seeds > 1) {
    const std::map<Estimator, PowerLawFitOptions> refit = WarmRefitOptions(in, estimates, options.fit);
    SetPairedMultipliers(in, options, refit, rows_at, &report);
    SetSeedIntervals(in, estimates, options, refit, rows_at, &report);
  } else {
    RUNG_RETURN_IF_ERROR(SetBootstrapIntervals(in, estimates, options, rows_at, &report));
  }
  RUNG_RETURN_IF_ERROR(AddESensitivity(in, options, &report));
  NoteLabelsTheBaselineLacks(in.curves, &report);
  if (options.predict) RUNG_RETURN_IF_ERROR(AddPredictedMultipliers(ladder, ladder, options, &report));
  return report;
}

const TunedPoint* MultiplierReport::TunedAt(const std::string& variant, const std::string& label) const {
  for (const TunedPoint& point : tuned) {
    if (point.variant == variant && point.label == label) return &point;
  }
  return nullptr;
}

}  // namespace rung::fit
