#include "sweeps/fit/law_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "core/diagnostics/score_statistics.h"
#include "sweeps/fit/compute_multipliers.h"

namespace rung::fit {
namespace {

std::string Num(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

// The baseline's loss along an allocation at compute c.
double LossAt(const ChinchillaLaw& law, double compute, const std::string& allocation, double tokens_per_param) {
  if (allocation == "optimal") return law.OptimalLoss(compute);
  const double n = std::sqrt(compute / (6.0 * tokens_per_param));
  return law.Predict(n, tokens_per_param * n);
}

// The parameters a variant fits of its own (for the residuals' scale): 5 less its shared ones.
int OwnParameters(LawSharing sharing, size_t variants) {
  if (variants < 2) return 5;
  if (sharing == LawSharing::kExponents) return 3;
  if (sharing == LawSharing::kE) return 4;
  return 5;
}

Range PercentileRange(const std::vector<double>& values, double level) {
  return {Quantile(values, (1 - level) / 2), Quantile(values, 1 - (1 - level) / 2)};
}

// The units bootstrap's intervals of every parameter (REQUIRES: the fit converged on `runs`).
Status SetParameterIntervals(const std::vector<LawRun>& runs, const LawFit& fit, const LawOptions& options,
                             LawReport* report) {
  IntervalBasis& basis = report->parameter_basis;
  const LawUnits units = LawUnitsOf(runs, fit.variants);
  basis.unit = units.by_seed ? "seeds" : "runs";
  basis.units = units.fewest;
  basis.replicates = options.bootstrap;
  if (options.bootstrap <= 0) {
    basis.why = "no bootstrap replicates were asked for";
    return Status::Ok();
  }
  if (units.fewest < kMinBootstrapUnits) {
    basis.why = std::to_string(units.fewest) + " " + basis.unit + (units.by_seed ? "" : " of a variant") +
                ": a percentile bootstrap needs " + std::to_string(kMinBootstrapUnits);
    return Status::Ok();
  }
  basis.construction = "percentile bootstrap";
  std::vector<LawPoint> points = PrepareLawPoints(runs, fit.variants);
  std::vector<int64_t> point_seed;
  for (const LawRun& run : runs) {
    if (std::find(fit.variants.begin(), fit.variants.end(), run.variant) != fit.variants.end()) {
      point_seed.push_back(run.seed.value_or(0));
    }
  }
  std::mt19937_64 generator(options.seed);
  const size_t count = fit.variants.size();
  std::vector<std::vector<ChinchillaLaw>> replicates;
  for (int replicate = 0; replicate < options.bootstrap; ++replicate) {
    if (options.keep_going) RUNG_RETURN_IF_ERROR(options.keep_going());
    for (LawPoint& point : points) point.weight = 0;
    if (units.by_seed) {
      const std::map<int64_t, double> drawn = DrawSeeds(units.seeds, generator);
      for (size_t index = 0; index < points.size(); ++index) {
        auto it = drawn.find(point_seed[index]);
        if (it != drawn.end()) points[index].weight = it->second;
      }
    } else {
      for (size_t variant = 0; variant < count; ++variant) {
        std::vector<size_t> members;
        for (size_t index = 0; index < points.size(); ++index) {
          if (points[index].variant == static_cast<int>(variant)) members.push_back(index);
        }
        std::uniform_int_distribution<size_t> pick(0, members.size() - 1);
        for (size_t draw = 0; draw < members.size(); ++draw) points[members[pick(generator)]].weight += 1;
      }
    }
    StatusOr<LawFit> refit = RefitChinchilla(points, fit.variants, {fit.laws}, options.fit);
    if (refit.ok()) replicates.push_back(refit->laws);
  }
  basis.used = static_cast<int>(replicates.size());
  if (basis.used < 2) {
    basis.construction.clear();
    basis.why = std::to_string(basis.used) + " of " + std::to_string(options.bootstrap) + " replicates converged";
    return Status::Ok();
  }
  for (size_t variant = 0; variant < count; ++variant) {
    std::vector<double> e, a, b, alpha, beta, n_exponent, d_exponent;
    for (const auto& laws : replicates) {
      const ChinchillaLaw& law = laws[variant];
      e.push_back(law.e);
      a.push_back(law.a);
      b.push_back(law.b);
      alpha.push_back(law.alpha);
      beta.push_back(law.beta);
      if (law.Decreasing()) {
        n_exponent.push_back(law.beta / (law.alpha + law.beta));
        d_exponent.push_back(law.alpha / (law.alpha + law.beta));
      }
    }
    LawParameterIntervals& out = report->variants[variant].intervals;
    out.e = PercentileRange(e, options.level);
    out.a = PercentileRange(a, options.level);
    out.b = PercentileRange(b, options.level);
    out.alpha = PercentileRange(alpha, options.level);
    out.beta = PercentileRange(beta, options.level);
    // Only where every replicate has an allocation: otherwise the percentiles are of a selection.
    if (n_exponent.size() == replicates.size()) {
      out.n_exponent = PercentileRange(n_exponent, options.level);
      out.d_exponent = PercentileRange(d_exponent, options.level);
    }
  }
  return Status::Ok();
}

// Every half decade from `low` to `high`.
std::vector<double> HalfDecades(double low, double high) {
  std::vector<double> computes;
  for (int k = static_cast<int>(std::ceil(2 * std::log10(low) - 1e-9));
       k <= static_cast<int>(std::floor(2 * std::log10(high) + 1e-9)); ++k) {
    computes.push_back(std::pow(10.0, k / 2.0));
  }
  return computes;
}

// The largest `count` distinct sizes held out, predicted by a fit to the rest.
Rollout RunRollout(const LawRuns& runs, const LawOptions& options, const LawFit& full) {
  Rollout rollout;
  std::set<double> sizes;
  for (const LawRun& run : runs.runs) sizes.insert(run.n);
  std::vector<double> descending(sizes.rbegin(), sizes.rend());
  const size_t held = std::min(descending.size(), static_cast<size_t>(options.rollout));
  rollout.held_out_n.assign(descending.begin(), descending.begin() + static_cast<long>(held));
  const double threshold = rollout.held_out_n.back();
  std::vector<LawRun> rest, held_out;
  for (const LawRun& run : runs.runs) (run.n < threshold ? rest : held_out).push_back(run);
  StatusOr<LawFit> fit = FitChinchilla(rest, full.variants, options.fit);
  if (!fit.ok()) {
    rollout.why = "without the " + std::to_string(held) + " largest size(s): " + fit.status().message();
    return rollout;
  }
  StatusOr<LawPredictor> predictor = LawPredictor::Build(rest, *fit, options);
  if (!predictor.ok()) {
    rollout.why = predictor.status().message();
    return rollout;
  }
  rollout.basis = predictor->basis();
  for (const LawRun& run : held_out) {
    const size_t variant =
        static_cast<size_t>(std::find(full.variants.begin(), full.variants.end(), run.variant) - full.variants.begin());
    RolloutPoint point;
    point.variant = run.variant;
    point.origin = run.origin;
    point.n = run.n;
    point.d = run.d;
    point.loss = run.loss;
    point.predicted = predictor->Predict(variant, run.n, run.d);
    point.interval = predictor->Interval(variant, run.n, run.d, options.level);
    point.inside = point.interval && point.interval->low <= run.loss && run.loss <= point.interval->high;
    rollout.inside += point.inside ? 1 : 0;
    rollout.mean_abs_error += std::fabs(point.predicted - run.loss);
    rollout.mean_relative_error += std::fabs(point.predicted - run.loss) / run.loss;
    rollout.points.push_back(point);
  }
  if (!rollout.points.empty()) {
    rollout.mean_abs_error /= static_cast<double>(rollout.points.size());
    rollout.mean_relative_error /= static_cast<double>(rollout.points.size());
  }
  return rollout;
}

}  // namespace

std::optional<double> LawMultiplier(const ChinchillaLaw& variant, const ChinchillaLaw& baseline, double compute,
                                    const std::string& allocation, double tokens_per_param, double log_shift) {
  if (!baseline.Decreasing() || (allocation == "optimal" && !variant.Decreasing())) return std::nullopt;
  const double target = LossAt(variant, compute, allocation, tokens_per_param) * std::exp(log_shift);
  if (!std::isfinite(target) || target <= baseline.e) return std::nullopt;
  // The baseline's loss falls with compute: bisect ln C_base within e^60 of C.
  double low = std::log(compute) - 60, high = std::log(compute) + 60;
  auto loss = [&](double log_c) { return LossAt(baseline, std::exp(log_c), allocation, tokens_per_param); };
  if (loss(low) < target || loss(high) > target) return std::nullopt;
  for (int step = 0; step < 200 && high - low > 1e-13; ++step) {
    const double middle = 0.5 * (low + high);
    (loss(middle) > target ? low : high) = middle;
  }
  return std::exp(0.5 * (low + high)) / compute;
}

StatusOr<LawPredictor> LawPredictor::Build(const std::vector<LawRun>& runs, const LawFit& fit,
                                           const LawOptions& options) {
  LawPredictor predictor;
  predictor.fit_ = fit;
  IntervalBasis& basis = predictor.basis_;
  basis.unit = "residuals";
  basis.replicates = options.bootstrap;
  std::vector<LawPoint> points = PrepareLawPoints(runs, fit.variants);
  const size_t count = fit.variants.size();
  std::vector<std::vector<double>> residuals(count);
  std::vector<double> fitted(points.size());
  for (size_t index = 0; index < points.size(); ++index) {
    const LawPoint& point = points[index];
    fitted[index] = std::log(fit.laws[static_cast<size_t>(point.variant)].Predict(std::exp(point.log_n),
                                                                                    std::exp(point.log_d)));
    residuals[static_cast<size_t>(point.variant)].push_back(point.log_loss - fitted[index]);
  }
  basis.units = std::numeric_limits<int>::max();
  for (const auto& pool : residuals) basis.units = std::min(basis.units, static_cast<int>(pool.size()));
  if (options.bootstrap <= 0) {
    basis.why = "no bootstrap replicates were asked for";
    return predictor;
  }
  if (basis.units < kMinBootstrapUnits) {
    basis.why = std::to_string(basis.units) + " runs of a variant: a residual bootstrap needs " +
                std::to_string(kMinBootstrapUnits);
    return predictor;
  }
  const int own = OwnParameters(options.fit.sharing, count);
  for (auto& pool : residuals) {
    double mean = 0;
    for (double r : pool) mean += r / static_cast<double>(pool.size());
    const double size = static_cast<double>(pool.size());
    const double scale = std::sqrt(size / (size - own));
    for (double& r : pool) r = (r - mean) * scale;
  }
  basis.construction = "residual bootstrap";
  std::mt19937_64 generator(options.seed ^ 0x9e3779b97f4a7c15ULL);
  for (int replicate = 0; replicate < options.bootstrap; ++replicate) {
    if (options.keep_going) RUNG_RETURN_IF_ERROR(options.keep_going());
    std::vector<LawPoint> drawn = points;
    for (size_t index = 0; index < drawn.size(); ++index) {
      const auto& pool = residuals[static_cast<size_t>(drawn[index].variant)];
      std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
      drawn[index].log_loss = fitted[index] + pool[pick(generator)];
    }
    std::vector<double> fresh(count);
    for (size_t variant = 0; variant < count; ++variant) {
      std::uniform_int_distribution<size_t> pick(0, residuals[variant].size() - 1);
      fresh[variant] = residuals[variant][pick(generator)];
    }
    StatusOr<LawFit> refit = RefitChinchilla(drawn, fit.variants, {fit.laws}, options.fit);
    if (!refit.ok()) continue;
    predictor.replicates_.push_back(refit->laws);
    predictor.replicate_residuals_.push_back(fresh);
  }
  basis.used = static_cast<int>(predictor.replicates_.size());
  if (basis.used < 2) {
    basis.construction.clear();
    basis.why = std::to_string(basis.used) + " of " + std::to_string(options.bootstrap) + " replicates converged";
    predictor.replicates_.clear();
  }
  return predictor;
}

std::optional<Range> LawPredictor::Interval(size_t variant, double n, double d, double level) const {
  if (replicates_.empty()) return std::nullopt;
  std::vector<double> values;
  for (size_t replicate = 0; replicate < replicates_.size(); ++replicate) {
    values.push_back(std::log(replicates_[replicate][variant].Predict(n, d)) + replicate_residuals_[replicate][variant]);
  }
  Range range = PercentileRange(values, level);
  return Range{std::exp(range.low), std::exp(range.high)};
}

PredictedMultiplier LawPredictor::Multiplier(size_t variant, size_t baseline, double compute,
                                             const std::string& allocation, double tokens_per_param,
                                             double level) const {
  PredictedMultiplier out;
  out.variant = fit_.variants[variant];
  out.compute = compute;
  out.allocation = allocation;
  const ChinchillaLaw& law = fit_.laws[variant];
  if (allocation == "optimal") {
    if (law.Decreasing()) {
      out.n = law.OptimalN(compute);
      out.d = law.OptimalD(compute);
    }
  } else {
    out.n = std::sqrt(compute / (6.0 * tokens_per_param));
    out.d = tokens_per_param * out.n;
  }
  if (allocation != "optimal" || law.Decreasing()) out.loss = LossAt(law, compute, allocation, tokens_per_param);
  out.multiplier = LawMultiplier(law, fit_.laws[baseline], compute, allocation, tokens_per_param);
  if (!out.multiplier) {
    out.why = !fit_.laws[baseline].Decreasing() || (allocation == "optimal" && !law.Decreasing())
                  ? "a law whose exponents are not both positive has no compute-optimal curve"
                  : "the baseline's law never reaches the variant's loss (below its E " + Num(fit_.laws[baseline].e) +
                        ")";
    return out;
  }
  if (replicates_.empty()) return out;
  std::vector<double> values;
  for (size_t replicate = 0; replicate < replicates_.size(); ++replicate) {
    std::optional<double> value =
        LawMultiplier(replicates_[replicate][variant], replicates_[replicate][baseline], compute, allocation,
                      tokens_per_param, replicate_residuals_[replicate][variant]);
    if (value) values.push_back(*value);
  }
  const size_t undefined = replicates_.size() - values.size();
  // Undefined replicates lie beyond one end: an interval of the rest would cover too little.
  if (static_cast<double>(undefined) > 0.5 * (1 - level) * static_cast<double>(replicates_.size())) {
    out.why = "no interval: in " + std::to_string(undefined) + " of " + std::to_string(replicates_.size()) +
              " replicates the baseline's law never reaches the variant's loss";
    return out;
  }
  out.interval = PercentileRange(values, level);
  return out;
}

StatusOr<LawReport> FitLaws(const LawRuns& runs, const LawOptions& options) {
  RUNG_RETURN_IF_ERROR(ValidateLawRuns(runs));
  if (!(options.level > 0 && options.level < 1)) {
    return Status::InvalidArgument("level must be in (0, 1), got " + Num(options.level));
  }
  RUNG_RETURN_IF_ERROR(CheckBootstrapReplicates(options.bootstrap));
  if (!(options.tokens_per_param > 0) || !std::isfinite(options.tokens_per_param)) {
    return Status::InvalidArgument("tokens per parameter must be a positive number, got " +
                                   Num(options.tokens_per_param));
  }
  for (double compute : options.at) {
    if (!(compute > 0) || !std::isfinite(compute)) {
      return Status::InvalidArgument("a compute to predict at must be a positive number of FLOPs, got " + Num(compute));
    }
  }
  const std::vector<std::string> variants = runs.Variants();
  if (!options.baseline.empty() &&
      std::find(variants.begin(), variants.end(), options.baseline) == variants.end()) {
    std::string names;
    for (const std::string& variant : variants) names += (names.empty() ? "" : ", ") + variant;
    return Status::InvalidArgument("baseline '" + options.baseline + "' is not a variant of " + runs.source + " (" +
                                   names + ")");
  }
  LawReport report;
  report.source = runs.source;
  report.metric = runs.metric;
  report.unit = LossUnit(runs.metric);
  report.fit_options = options.fit;
  report.level = options.level;
  report.seed = options.seed;
  report.baseline = options.baseline;
  report.tokens_per_param = options.tokens_per_param;
  if (options.isoflop) {
    IsoflopOptions isoflop;
    isoflop.bootstrap = options.bootstrap;
    isoflop.seed = options.seed;
    isoflop.level = options.level;
    isoflop.keep_going = options.keep_going;
    StatusOr<IsoflopReport> profiles = FitIsoflopProfiles(runs, isoflop);
    if (profiles.ok()) {
      report.isoflop = std::move(*profiles);
    } else if (profiles.status().code() == StatusCode::kFailedPrecondition) {
      report.isoflop_why = profiles.status().message();
    } else {
      return profiles.status();
    }
  }
  RUNG_ASSIGN_OR_RETURN(LawFit fit, FitChinchilla(runs.runs, variants, options.fit));
  report.grid_points = fit.grid_points;
  report.starts = fit.starts;
  report.converged_starts = fit.converged_starts;
  report.objective = fit.objective;
  for (size_t index = 0; index < variants.size(); ++index) {
    VariantLaw variant;
    variant.variant = variants[index];
    variant.law = fit.laws[index];
    variant.rmse = fit.rmse[index];
    variant.points = fit.points[index];
    double smallest = std::numeric_limits<double>::infinity();
    for (const LawRun& run : runs.runs) {
      if (run.variant == variants[index]) smallest = std::min(smallest, run.loss);
    }
    if (variant.law.e < 1e-6 * smallest) {
      report.notes.push_back(variants[index] + ": E fitted at about 0 (" + Num(variant.law.e) +
                             "): the runs do not reach the loss floor, so they do not pin E down");
    }
    if (variant.law.Decreasing()) {
      variant.n_exponent = variant.law.beta / (variant.law.alpha + variant.law.beta);
      variant.d_exponent = variant.law.alpha / (variant.law.alpha + variant.law.beta);
    } else {
      report.notes.push_back(variants[index] + ": an exponent is not positive (alpha " + Num(variant.law.alpha) +
                             ", beta " + Num(variant.law.beta) + "), so the law has no compute-optimal allocation");
    }
    report.variants.push_back(variant);
  }
  for (const LawRun& run : runs.runs) {
    const size_t variant =
        static_cast<size_t>(std::find(variants.begin(), variants.end(), run.variant) - variants.begin());
    report.runs.push_back({run.variant, run.origin, run.n, run.d, run.loss, fit.laws[variant].Predict(run.n, run.d)});
  }
  RUNG_RETURN_IF_ERROR(SetParameterIntervals(runs.runs, fit, options, &report));
  RUNG_ASSIGN_OR_RETURN(LawPredictor predictor, LawPredictor::Build(runs.runs, fit, options));
  report.prediction_basis = predictor.basis();
  if (!options.baseline.empty() && variants.size() > 1) {
    double low = std::numeric_limits<double>::infinity(), high = 0;
    std::map<std::string, double> largest;
    for (const LawRun& run : runs.runs) {
      low = std::min(low, run.compute());
      high = std::max(high, run.compute());
      largest[run.variant] = std::max(largest[run.variant], run.compute());
    }
    const std::vector<double> at = options.at.empty() ? HalfDecades(low, 100 * high) : options.at;
    const size_t baseline =
        static_cast<size_t>(std::find(variants.begin(), variants.end(), options.baseline) - variants.begin());
    for (const char* allocation : {"rule", "optimal"}) {
      for (size_t variant = 0; variant < variants.size(); ++variant) {
        if (variant == baseline) continue;
        for (double compute : at) {
          PredictedMultiplier multiplier = predictor.Multiplier(variant, baseline, compute, allocation,
                                                                options.tokens_per_param, options.level);
          multiplier.extrapolated = compute > largest[variants[variant]] * (1 + 1e-9);
          report.multipliers.push_back(multiplier);
        }
      }
    }
  }
  if (options.rollout > 0) report.rollout = RunRollout(runs, options, fit);
  return report;
}

Status AddPredictedMultipliers(const LadderResults& ladder, const LadderResults& at, const MultiplierOptions& options,
                               MultiplierReport* report) {
  StatusOr<LawRuns> runs = LawRunsOfLadder(ladder, report->metric);
  if (!runs.ok()) return Status::Ok();  // nothing to predict from, and nothing to say

  // The baseline's ladder computes, each with its label, then 10 and 100 times the largest.
  std::map<double, std::string> labels;
  for (const LadderRun& run : at.runs) {
    if (run.variant == report->baseline) labels.emplace(run.compute, run.label);
  }
  LawOptions law;
  law.baseline = report->baseline;
  law.bootstrap = std::min(options.bootstrap, kPredictedReplicates);
  law.seed = options.seed;
  law.level = options.interval_level;
  law.rollout = 0;
  law.isoflop = false;
  law.keep_going = options.keep_going;
  for (const auto& [compute, label] : labels) law.at.push_back(compute);
  if (!labels.empty()) {
    law.at.push_back(10 * labels.rbegin()->first);
    law.at.push_back(100 * labels.rbegin()->first);
  }
  report->predicted_tokens_per_param = law.tokens_per_param;
  report->predicted_level = law.level;
  StatusOr<LawReport> laws = FitLaws(*runs, law);
  if (!laws.ok()) {
    if (options.keep_going) RUNG_RETURN_IF_ERROR(options.keep_going());
    report->predicted_why = laws.status().message();
    return Status::Ok();
  }
  report->predicted_basis = laws->prediction_basis;
  for (const VariantLaw& variant : laws->variants) {
    report->predicted_laws.push_back(variant.variant + ": E " + Num(variant.law.e) + ", A " + Num(variant.law.a) +
                                     ", B " + Num(variant.law.b) + ", alpha " + Num(variant.law.alpha) + ", beta " +
                                     Num(variant.law.beta) + " (RMSE " + Num(variant.rmse) + ", " +
                                     std::to_string(variant.points) + " runs)");
  }
  for (PredictedMultiplier& row : laws->multipliers) {
    auto label = labels.find(row.compute);
    if (label != labels.end()) row.label = label->second;
    report->predicted.push_back(std::move(row));
  }
  return Status::Ok();
}

}  // namespace rung::fit
