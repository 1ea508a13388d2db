#include "sweeps/fit/compute_multipliers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "sweeps/fit/piecewise.h"

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
  std::vector<CurvePoint> points;  // piecewise: the baseline's curve
  std::optional<PowerLaw> law;     // power laws: the baseline's fit
  std::string unavailable;         // why nothing can be inverted (the fit failed)

  Inversion Invert(double loss) const {
    if (!unavailable.empty()) return {std::nullopt, "", unavailable};
    if (estimator == Estimator::kPiecewise) {
      PiecewiseInversion at = InvertPiecewise(points, loss);
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

BaselineInverter PiecewiseInverter(const std::vector<CurvePoint>& baseline) {
  BaselineInverter inverter;
  inverter.estimator = Estimator::kPiecewise;
  inverter.points = baseline;
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
  if (estimator == Estimator::kPiecewise) return PiecewiseInverter(curves[0]);
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

double Percentile(const std::vector<double>& sorted, double q) {
  double position = q * static_cast<double>(sorted.size() - 1);
  size_t below = static_cast<size_t>(std::floor(position));
  size_t above = std::min(below + 1, sorted.size() - 1);
  double t = position - static_cast<double>(below);
  return sorted[below] * (1 - t) + sorted[above] * t;
}

// Number of distinct multisets of k seeds drawn from k: C(2k - 1, k).
double DistinctResamples(int k) {
  double count = 1;
  for (int index = 1; index <= k; ++index) count = count * (k - 1 + index) / index;
  return count;
}

// Bootstrap refits: a few starts around the point estimate.
PowerLawFitOptions QuickFitOptions(const PowerLawFitOptions& full) {
  PowerLawFitOptions quick = full;
  quick.alpha_starts = {0.1, 0.3, 0.7};
  quick.e_start_fractions = {0.0, 0.5, 0.9};
  return quick;
}

}  // namespace

const char* EstimatorName(Estimator estimator) {
  switch (estimator) {
    case Estimator::kPiecewise:
      return "piecewise";
    case Estimator::kPowerLawSharedE:
      return "power_law_shared_e";
    case Estimator::kPowerLawFreeE:
      return "power_law_free_e";
    case Estimator::kPowerLawFixedE:
      return "power_law_fixed_e";
  }
  return "?";
}

Status CheckBootstrapReplicates(int64_t replicates) {
  if (replicates <= kMaxBootstrapReplicates) return Status::Ok();
  return Status::InvalidArgument("bootstrap: " + std::to_string(replicates) +
                                 " replicates are more than the fixed limit of " +
                                 std::to_string(kMaxBootstrapReplicates) + " (sweeps/fit/compute_multipliers.h)");
}

StatusOr<MultiplierReport> ComputeMultipliers(const LadderResults& ladder, const MultiplierOptions& options) {
  RUNG_RETURN_IF_ERROR(CheckBootstrapReplicates(options.bootstrap));
  RUNG_RETURN_IF_ERROR(ValidateLadderResults(ladder));
  MultiplierReport report;
  report.source = ladder.source;
  report.baseline = options.baseline;
  report.has_seeds = ladder.has_seeds();
  report.has_seconds = ladder.has_seconds();
  report.bootstrap_replicates = options.bootstrap;
  report.bootstrap_seed = options.seed;

  // Curves, baseline first.
  std::vector<VariantCurve> all = BuildCurves(ladder);
  auto baseline_it = std::find_if(all.begin(), all.end(),
                                  [&](const VariantCurve& curve) { return curve.variant == options.baseline; });
  if (baseline_it == all.end()) {
    std::string known;
    for (const VariantCurve& curve : all) known += (known.empty() ? "" : ", ") + curve.variant;
    return Status::InvalidArgument("baseline '" + options.baseline + "' is not a variant of " + ladder.source +
                                   " (variants: " + known + ")");
  }
  std::vector<VariantCurve> curves = {*baseline_it};
  for (const VariantCurve& curve : all) {
    if (curve.variant != options.baseline) curves.push_back(curve);
  }
  const size_t V = curves.size();
  for (const VariantCurve& curve : curves) report.variants.push_back(curve.variant);
  std::set<std::string> labels;
  std::set<int64_t> seed_ids;
  double log_sum = 0;
  int point_count = 0;
  double min_mean_loss = std::numeric_limits<double>::infinity();
  for (const VariantCurve& curve : curves) {
    for (const LadderPoint& point : curve.points) {
      labels.insert(point.label);
      for (const auto& [seed, run] : point.seeds) seed_ids.insert(seed);
      report.max_seeds = std::max(report.max_seeds, static_cast<int>(point.seeds.size()));
      log_sum += std::log(point.compute);
      ++point_count;
      min_mean_loss = std::min(min_mean_loss, point.loss);
    }
  }
  report.ladder_points = static_cast<int>(labels.size());
  report.c_ref = std::exp(log_sum / point_count);
  const double c_ref = report.c_ref;
  double baseline_min_loss = std::numeric_limits<double>::infinity();
  for (const LadderPoint& point : curves[0].points) baseline_min_loss = std::min(baseline_min_loss, point.loss);

  // Options that depend on the data.
  if (options.bootstrap < 0) return Status::InvalidArgument("bootstrap replicates must be >= 0");
  if (!(options.interval_level > 0 && options.interval_level < 1)) {
    return Status::InvalidArgument("interval level must be in (0, 1)");
  }
  auto check_e = [&](double e, const std::string& what) -> Status {
    if (!std::isfinite(e) || e < 0 || e >= baseline_min_loss) {
      return Status::InvalidArgument(what + " " + Num(e) + " is outside [0, " + Num(baseline_min_loss, "%.4f") +
                                     "): E must be below the baseline's smallest seed-mean loss");
    }
    return Status::Ok();
  };
  if (options.fixed_e) RUNG_RETURN_IF_ERROR(check_e(*options.fixed_e, "fixed E"));
  if (options.e_sensitivity) {
    if (options.e_grid.empty()) {
      for (double fraction : {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95}) {
        report.e_grid.push_back(std::floor(fraction * min_mean_loss * 1000) / 1000);
      }
    } else {
      for (double e : options.e_grid) RUNG_RETURN_IF_ERROR(check_e(e, "E grid value"));
      report.e_grid = options.e_grid;
    }
  }

  std::vector<Estimator> estimators = {Estimator::kPiecewise};
  if (options.shared_e) estimators.push_back(Estimator::kPowerLawSharedE);
  if (options.free_e) estimators.push_back(Estimator::kPowerLawFreeE);
  if (options.fixed_e) estimators.push_back(Estimator::kPowerLawFixedE);

  Curves mean_curves;
  for (const VariantCurve& curve : curves) mean_curves.push_back(MeanCurve(curve));

  // Non-monotone baseline.
  std::vector<std::string> steps = NonMonotoneSteps(mean_curves[0]);
  if (!steps.empty()) {
    std::string list;
    for (const std::string& step : steps) list += (list.empty() ? "" : ", ") + step;
    report.notes.push_back("the baseline " + options.baseline +
                           (report.max_seeds > 1 ? "'s seed-mean loss" : "'s loss") + " does not fall at " + list +
                           ": losses it reaches more than once have no piecewise multiplier");
  }

  // Point estimates: fits and inverters per estimator.
  std::map<Estimator, BaselineInverter> inverters;
  std::map<Estimator, std::vector<FitSummary>> fits;
  for (Estimator estimator : estimators) {
    if (estimator == Estimator::kPiecewise) {
      inverters[estimator] = PiecewiseInverter(mean_curves[0]);
      continue;
    }
    fits[estimator] = FitAll(estimator, mean_curves, report.variants, FixedEOf(estimator, options.fixed_e), c_ref,
                             options.fit, false);
    inverters[estimator] = PowerLawInverter(estimator, fits[estimator][0]);
    for (const FitSummary& summary : fits[estimator]) {
      report.fits.push_back(summary);
      std::string what = std::string(EstimatorName(estimator)) + " fit of " + summary.variant;
      if (!summary.fit)
        report.notes.push_back(what + " failed: " + summary.why);
      else
        for (const std::string& note : summary.fit->notes) report.notes.push_back(what + ": " + note);
    }
  }

  // Rows of the seed-mean curves.
  auto make_row = [&](size_t v, size_t p, Estimator estimator, const BaselineInverter& inverter) {
    const LadderPoint& point = curves[v].points[p];
    MultiplierRow row;
    row.variant = curves[v].variant;
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
  };
  // rows_at[estimator][v][p] -> index into report.rows.
  std::map<Estimator, std::vector<std::vector<size_t>>> rows_at;
  for (Estimator estimator : estimators) {
    rows_at[estimator].resize(V);
    for (size_t v = 0; v < V; ++v) {
      for (size_t p = 0; p < curves[v].points.size(); ++p) {
        MultiplierRow row = make_row(v, p, estimator, inverters[estimator]);
        if (estimator != Estimator::kPiecewise) {
          const std::vector<FitSummary>& own = fits[estimator];
          if (own[v].fit) row.fit_rmse = own[v].fit->rmse;
          if (own[0].fit) row.baseline_fit_rmse = own[0].fit->rmse;
        }
        rows_at[estimator][v].push_back(report.rows.size());
        report.rows.push_back(std::move(row));
      }
    }
  }

  // Loss gaps (estimator-independent), paired by seed where there are seeds.
  for (size_t v = 0; v < V; ++v) {
    for (size_t p = 0; p < curves[v].points.size(); ++p) {
      const LadderPoint& point = curves[v].points[p];
      const LadderPoint* base = curves[0].Find(point.label);
      if (!base) continue;
      std::vector<double> gaps;
      for (const auto& [seed, run] : point.seeds) {
        auto base_run = base->seeds.find(seed);
        if (base_run != base->seeds.end()) gaps.push_back(run.loss - base_run->second.loss);
      }
      if (gaps.empty()) continue;
      SeedStats gap = Stats(gaps, 0);
      for (Estimator estimator : estimators) report.rows[rows_at[estimator][v][p]].loss_gap = gap;
    }
  }

  // Paired (per-seed) multipliers.
  if (report.has_seeds && report.max_seeds > 1) {
    std::map<Estimator, std::vector<std::vector<std::vector<double>>>> values;
    std::map<Estimator, std::vector<std::vector<int>>> undefined;
    for (Estimator estimator : estimators) {
      values[estimator].assign(V, {});
      undefined[estimator].assign(V, {});
      for (size_t v = 0; v < V; ++v) {
        values[estimator][v].assign(curves[v].points.size(), {});
        undefined[estimator][v].assign(curves[v].points.size(), 0);
      }
    }
    for (int64_t seed : seed_ids) {
      Curves seed_curves;
      for (const VariantCurve& curve : curves) seed_curves.push_back(SeedCurve(curve, seed));
      if (seed_curves[0].empty()) continue;  // the baseline has no run of this seed: nothing is paired
      for (Estimator estimator : estimators) {
        BaselineInverter inverter = InverterFor(estimator, seed_curves, report.variants,
                                                FixedEOf(estimator, options.fixed_e), c_ref, options.fit);
        for (size_t v = 0; v < V; ++v) {
          for (size_t p = 0; p < curves[v].points.size(); ++p) {
            const LadderPoint& point = curves[v].points[p];
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
    for (Estimator estimator : estimators) {
      for (size_t v = 0; v < V; ++v) {
        for (size_t p = 0; p < curves[v].points.size(); ++p) {
          report.rows[rows_at[estimator][v][p]].paired_multiplier =
              Stats(values[estimator][v][p], undefined[estimator][v][p]);
        }
      }
    }
  }

  // Wall clock.
  if (report.has_seconds) {
    std::vector<CurvePoint> base_seconds = MeanSecondsCurve(curves[0]);
    for (size_t v = 0; v < V; ++v) {
      for (size_t p = 0; p < curves[v].points.size(); ++p) {
        MultiplierRow& row = report.rows[rows_at[Estimator::kPiecewise][v][p]];
        PiecewiseInversion at = InvertPiecewise(base_seconds, row.loss);
        if (at.x && row.seconds)
          row.wallclock_multiplier = *at.x / *row.seconds;
        else
          row.wallclock_why = at.why;
      }
    }
  }

  // Bootstrap.
  const int seed_count = static_cast<int>(seed_ids.size());
  const bool by_seeds = report.has_seeds && seed_count >= 2;
  size_t min_points = std::numeric_limits<size_t>::max();
  for (const VariantCurve& curve : curves) min_points = std::min(min_points, curve.points.size());
  const bool by_runs = !by_seeds && min_points >= 4;
  std::string no_interval;
  if (options.bootstrap == 0) {
    no_interval = "no bootstrap requested";
  } else if (!by_seeds && !by_runs) {
    no_interval = "one run per ladder point and fewer than 4 points per curve: too few to resample";
  }
  if (options.bootstrap > 0 && (by_seeds || by_runs)) {
    report.bootstrap_unit = by_seeds ? "seeds" : "runs";
    if (by_seeds && DistinctResamples(seed_count) < 100) {
      report.notes.push_back(std::to_string(seed_count) + " seeds: the seed bootstrap has only " +
                             Num(DistinctResamples(seed_count), "%.0f") +
                             " distinct resamples; read its intervals as rough");
    }
    if (by_runs) {
      report.notes.push_back(
          "one run per ladder point: the bootstrap resamples ladder points of each curve, "
          "which gives intervals for the power-law fits only");
    }
    PowerLawFitOptions quick = QuickFitOptions(options.fit);
    std::map<Estimator, PowerLawFitOptions> quick_for;
    for (Estimator estimator : estimators) {
      quick_for[estimator] = quick;
      if (estimator == Estimator::kPiecewise) continue;
      const std::vector<FitSummary>& point_fits = fits[estimator];
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
    std::vector<int64_t> seed_list(seed_ids.begin(), seed_ids.end());
    std::mt19937_64 generator(options.seed);
    std::map<Estimator, std::vector<std::vector<std::vector<double>>>> samples;
    for (Estimator estimator : estimators) {
      samples[estimator].assign(V, {});
      for (size_t v = 0; v < V; ++v) samples[estimator][v].assign(curves[v].points.size(), {});
    }
    int skipped = 0;
    for (int replicate = 0; replicate < options.bootstrap; ++replicate) {
      if (options.keep_going) RUNG_RETURN_IF_ERROR(options.keep_going());
      Curves replicate_curves(V);
      std::vector<std::vector<double>> replicate_loss(V);
      bool valid = true;
      if (by_seeds) {
        std::map<int64_t, int> weight;
        std::uniform_int_distribution<size_t> pick(0, seed_list.size() - 1);
        for (size_t draw = 0; draw < seed_list.size(); ++draw) ++weight[seed_list[pick(generator)]];
        for (size_t v = 0; v < V && valid; ++v) {
          for (const LadderPoint& point : curves[v].points) {
            double sum = 0, total = 0;
            for (const auto& [seed, run] : point.seeds) {
              auto w = weight.find(seed);
              if (w == weight.end()) continue;
              sum += w->second * run.loss;
              total += w->second;
            }
            if (total == 0) {
              valid = false;
              break;
            }
            replicate_curves[v].push_back({point.compute, sum / total, point.label});
            replicate_loss[v].push_back(sum / total);
          }
        }
      } else {
        for (size_t v = 0; v < V; ++v) {
          std::uniform_int_distribution<size_t> pick(0, curves[v].points.size() - 1);
          for (size_t draw = 0; draw < curves[v].points.size(); ++draw) {
            const LadderPoint& point = curves[v].points[pick(generator)];
            replicate_curves[v].push_back({point.compute, point.loss, point.label});
          }
          for (const LadderPoint& point : curves[v].points) replicate_loss[v].push_back(point.loss);
        }
      }
      if (!valid) {
        ++skipped;
        continue;
      }
      for (Estimator estimator : estimators) {
        if (estimator == Estimator::kPiecewise && !by_seeds) continue;
        BaselineInverter inverter = InverterFor(estimator, replicate_curves, report.variants,
                                                FixedEOf(estimator, options.fixed_e), c_ref, quick_for[estimator]);
        for (size_t v = 0; v < V; ++v) {
          for (size_t p = 0; p < curves[v].points.size(); ++p) {
            Inversion at = inverter.Invert(replicate_loss[v][p]);
            if (at.compute) samples[estimator][v].at(p).push_back(*at.compute / curves[v].points[p].compute);
          }
        }
      }
    }
    const int drawn = options.bootstrap - skipped;
    if (skipped > 0) {
      report.notes.push_back(std::to_string(skipped) + " of " + std::to_string(options.bootstrap) +
                             " bootstrap replicates left a ladder point without runs and were skipped");
    }
    for (Estimator estimator : estimators) {
      for (size_t v = 0; v < V; ++v) {
        for (size_t p = 0; p < curves[v].points.size(); ++p) {
          MultiplierRow& row = report.rows[rows_at[estimator][v][p]];
          if (estimator == Estimator::kPiecewise && !by_seeds) {
            row.interval_note = "one run per ladder point: the piecewise estimator has nothing to resample";
            continue;
          }
          std::vector<double>& values = samples[estimator][v][p];
          int missing = drawn - static_cast<int>(values.size());
          if (static_cast<int>(values.size()) < kMinReplicatesForInterval) {
            row.interval_note = "only " + std::to_string(values.size()) + " of " + std::to_string(drawn) +
                                " bootstrap replicates defined";
            continue;
          }
          std::sort(values.begin(), values.end());
          Interval interval;
          interval.level = options.interval_level;
          interval.replicates = static_cast<int>(values.size());
          interval.low = Percentile(values, (1 - options.interval_level) / 2);
          interval.high = Percentile(values, 1 - (1 - options.interval_level) / 2);
          row.interval = interval;
          if (missing > 0) {
            row.interval_note = std::to_string(missing) + " of " + std::to_string(drawn) + " replicates undefined";
          }
        }
      }
    }
  } else {
    for (MultiplierRow& row : report.rows) row.interval_note = no_interval;
  }

  // E sensitivity: the baseline fitted at each fixed E of the grid.
  for (double e : report.e_grid) {
    if (options.keep_going) RUNG_RETURN_IF_ERROR(options.keep_going());
    StatusOr<PowerLawFit> fit = FitPowerLaw(mean_curves[0], e, c_ref, options.fit);
    FitSummary summary;
    summary.variant = options.baseline;
    summary.mode = EMode::kFixed;
    if (fit.ok())
      summary.fit = fit.value();
    else
      summary.why = fit.status().message();
    report.e_grid_baseline_rmse.push_back(fit.ok() ? std::optional<double>(fit->rmse) : std::nullopt);
    BaselineInverter inverter = PowerLawInverter(Estimator::kPowerLawFixedE, summary);
    for (size_t v = 0; v < V; ++v) {
      for (size_t p = 0; p < curves[v].points.size(); ++p) {
        MultiplierRow row = make_row(v, p, Estimator::kPowerLawFixedE, inverter);
        row.e = e;
        if (fit.ok()) row.baseline_fit_rmse = fit->rmse;
        report.e_sensitivity.push_back(std::move(row));
      }
    }
  }

  // Labels of a variant the baseline lacks.
  for (size_t v = 1; v < V; ++v) {
    for (const LadderPoint& point : curves[v].points) {
      if (!curves[0].Find(point.label)) {
        report.notes.push_back(curves[v].variant + " at " + point.label +
                               ": the baseline has no run at that label, "
                               "so no loss gap (the multiplier does not need one)");
      }
    }
  }
  return report;
}

const TunedPoint* MultiplierReport::TunedAt(const std::string& variant, const std::string& label) const {
  for (const TunedPoint& point : tuned) {
    if (point.variant == variant && point.label == label) return &point;
  }
  return nullptr;
}

}  // namespace rung::fit
