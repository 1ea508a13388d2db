// sweeps/fit/seed_noise.cc
#include "sweeps/fit/seed_noise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

namespace rung::fit {
namespace {

const VariantCurve* CurveOf(const std::vector<VariantCurve>& curves, const std::string& variant) {
  for (const VariantCurve& curve : curves) {
    if (curve.variant == variant) return &curve;
  }
  return nullptr;
}

std::string Num(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

}  // namespace

namespace {

// A variant cell's runs beside the baseline's runs of the same label and seed.
struct PairedRun {
  double variant = 0;
  double baseline = 0;
};

std::vector<PairedRun> PairedRuns(const LadderPoint& point, const LadderPoint& base_point) {
  std::vector<PairedRun> pairs;
  for (const auto& [seed, run] : point.seeds) {
    auto paired = base_point.seeds.find(seed);
    if (paired != base_point.seeds.end()) pairs.push_back({run.loss, paired->second.loss});
  }
  return pairs;
}

// The sample sd of the paired gaps (2+ pairs).
double GapSd(const std::vector<PairedRun>& pairs) {
  const double n = static_cast<double>(pairs.size());
  double mean = 0;
  for (const PairedRun& pair : pairs) mean += (pair.variant - pair.baseline) / n;
  double squares = 0;
  for (const PairedRun& pair : pairs) {
    const double deviation = pair.variant - pair.baseline - mean;
    squares += deviation * deviation;
  }
  return std::sqrt(squares / (n - 1));
}

}  // namespace

double PooledNoise::ModelRho() const {
  if (!std::isfinite(rho)) return 0;
  return std::clamp(rho, 0.0, 1.0);
}

namespace {

// Sums behind a PooledNoise.
struct NoiseSums {
  double squares = 0;
  double cross = 0, variant_squares = 0, base_squares = 0;
  PooledNoise pooled;

  PooledNoise Done() const {
    PooledNoise done = pooled;
    done.sigma = done.df > 0 ? std::sqrt(squares / done.df) : 0;
    done.rho = variant_squares > 0 && base_squares > 0 ? cross / std::sqrt(variant_squares * base_squares)
                                                       : std::numeric_limits<double>::quiet_NaN();
    return done;
  }
};

}  // namespace

StatusOr<SeedNoise> MeasureSeedNoise(const LadderResults& ladder, const std::string& baseline) {
  RUNG_RETURN_IF_ERROR(ValidateLadderResults(ladder));
  if (!ladder.has_seeds()) {
    return Status::InvalidArgument(ladder.source + ": the ladder has no seeds, so no seed noise to measure");
  }
  const std::vector<VariantCurve> curves = BuildCurves(ladder);
  const VariantCurve* base = CurveOf(curves, baseline);
  if (base == nullptr) {
    return Status::InvalidArgument(ladder.source + ": no variant '" + baseline + "' to pair the seeds with");
  }
  SeedNoise noise;
  NoiseSums all;
  std::map<std::string, NoiseSums> by_label;
  for (const VariantCurve& curve : curves) {
    for (const LadderPoint& point : curve.points) {
      if (point.seeds.size() < 2) continue;
      const int n = static_cast<int>(point.seeds.size());
      double squares = 0;
      for (const auto& [seed, run] : point.seeds) squares += (run.loss - point.loss) * (run.loss - point.loss);
      NoiseSums& label = by_label[point.label];
      for (NoiseSums* sums : {&all, &label}) {
        sums->squares += squares;
        sums->pooled.df += n - 1;
        ++sums->pooled.cells;
      }
      CellNoise cell{curve.variant, point.label, n, point.loss_sd, 0, 0};
      const LadderPoint* base_point = curve.variant == baseline ? nullptr : base->Find(point.label);
      const std::vector<PairedRun> pairs = base_point ? PairedRuns(point, *base_point) : std::vector<PairedRun>();
      if (pairs.size() >= 2) {
        cell.gap_sd = GapSd(pairs);
        cell.gap_pairs = static_cast<int>(pairs.size());
      }
      noise.per_cell.push_back(cell);
      // The pairing: residuals about each cell's seed mean, where the baseline's cell has 2+ seeds too.
      if (pairs.empty() || base_point->seeds.size() < 2) continue;
      for (NoiseSums* sums : {&all, &label}) {
        ++sums->pooled.paired_cells;
        for (const PairedRun& pair : pairs) {
          const double r_variant = pair.variant - point.loss;
          const double r_base = pair.baseline - base_point->loss;
          sums->cross += r_variant * r_base;
          sums->variant_squares += r_variant * r_variant;
          sums->base_squares += r_base * r_base;
          ++sums->pooled.pairs;
        }
      }
    }
  }
  if (all.pooled.cells == 0) {
    return Status::InvalidArgument(ladder.source + ": no (variant, ladder point) has two seeds: the seed noise "
                                                   "needs a ladder run with 2+ seeds");
  }
  static_cast<PooledNoise&>(noise) = all.Done();
  for (const auto& [label, sums] : by_label) noise.per_label[label] = sums.Done();
  return noise;
}

StatusOr<LossLaw> FitBaselineLossLaw(const LadderResults& ladder, const std::string& baseline) {
  RUNG_RETURN_IF_ERROR(ValidateLadderResults(ladder));
  const std::vector<VariantCurve> curves = BuildCurves(ladder);
  const VariantCurve* base = CurveOf(curves, baseline);
  if (base == nullptr) return Status::InvalidArgument(ladder.source + ": no variant '" + baseline + "'");
  const std::vector<CurvePoint> points = MeanCurve(*base);
  if (points.size() < 2) {
    return Status::FailedPrecondition(ladder.source + ": the baseline " + baseline + " has " +
                                      std::to_string(points.size()) +
                                      " ladder point(s); its loss curve needs 2 or more");
  }
  double log_sum = 0;
  for (const CurvePoint& point : points) log_sum += std::log(point.x);
  const double c_ref = std::exp(log_sum / static_cast<double>(points.size()));
  const std::optional<double> fixed_e = points.size() >= 3 ? std::nullopt : std::optional<double>(0.0);
  RUNG_ASSIGN_OR_RETURN(PowerLawFit fit, FitPowerLaw(points, fixed_e, c_ref, PowerLawFitOptions()));
  LossLaw law;
  law.law = fit.law;
  law.how = "L = " + Num(fit.law.e) + " + " + Num(fit.law.A()) + " C^-" + Num(fit.law.alpha) + ", fitted to " +
            baseline + "'s " + std::to_string(points.size()) + " seed-mean points of " + ladder.source +
            (fixed_e ? " (E fixed at 0: two points fix A and alpha only)" : " (E free)");
  return law;
}

}  // namespace rung::fit
