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

// The cell's paired gap sd against the baseline's point of its label, over the seeds both ran (2+).
void SetGap(const VariantCurve& base, const LadderPoint& point, CellNoise* cell) {
  const LadderPoint* base_point = base.Find(point.label);
  if (base_point == nullptr) return;
  std::vector<double> gaps;
  for (const auto& [seed, run] : point.seeds) {
    auto paired = base_point->seeds.find(seed);
    if (paired != base_point->seeds.end()) gaps.push_back(run.loss - paired->second.loss);
  }
  if (gaps.size() < 2) return;
  double mean = 0;
  for (double gap : gaps) mean += gap / static_cast<double>(gaps.size());
  double squares = 0;
  for (double gap : gaps) squares += (gap - mean) * (gap - mean);
  cell->gap_sd = std::sqrt(squares / static_cast<double>(gaps.size() - 1));
  cell->gap_pairs = static_cast<int>(gaps.size());
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
      double cell = 0;
      for (const auto& [seed, run] : point.seeds) cell += (run.loss - point.loss) * (run.loss - point.loss);
      const int n = static_cast<int>(point.seeds.size());
      for (NoiseSums* sums : {&all, &by_label[point.label]}) {
        sums->squares += cell;
        sums->pooled.df += n - 1;
        ++sums->pooled.cells;
      }
      CellNoise cell_noise{curve.variant, point.label, n, std::sqrt(cell / (n - 1)), 0, 0};
      if (curve.variant != baseline) SetGap(*base, point, &cell_noise);
      noise.per_cell.push_back(cell_noise);
    }
  }
  if (all.pooled.cells == 0) {
    return Status::InvalidArgument(ladder.source + ": no (variant, ladder point) has two seeds: the seed noise "
                                                   "needs a ladder run with 2+ seeds");
  }
  for (const VariantCurve& curve : curves) {
    if (curve.variant == baseline) continue;
    for (const LadderPoint& point : curve.points) {
      const LadderPoint* base_point = base->Find(point.label);
      if (base_point == nullptr || point.seeds.size() < 2 || base_point->seeds.size() < 2) continue;
      bool paired_cell = false;
      for (const auto& [seed, run] : point.seeds) {
        auto paired = base_point->seeds.find(seed);
        if (paired == base_point->seeds.end()) continue;
        if (!paired_cell) {
          paired_cell = true;
          ++all.pooled.paired_cells;
          ++by_label[point.label].pooled.paired_cells;
        }
        const double r_variant = run.loss - point.loss;
        const double r_base = paired->second.loss - base_point->loss;
        for (NoiseSums* sums : {&all, &by_label[point.label]}) {
          sums->cross += r_variant * r_base;
          sums->variant_squares += r_variant * r_variant;
          sums->base_squares += r_base * r_base;
          ++sums->pooled.pairs;
        }
      }
    }
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
