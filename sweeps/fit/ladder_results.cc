#include "sweeps/fit/ladder_results.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

namespace rung::fit {
namespace {

std::string Where(const LadderRun& run) {
  if (!run.origin.empty()) return run.origin;
  std::string where = "variant '" + run.variant + "' label '" + run.label + "'";
  if (run.seed) where += " seed " + std::to_string(*run.seed);
  return where;
}

std::string Num(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

}  // namespace

std::vector<std::string> LadderResults::Variants() const {
  std::vector<std::string> variants;
  for (const LadderRun& run : runs) {
    if (std::find(variants.begin(), variants.end(), run.variant) == variants.end()) variants.push_back(run.variant);
  }
  return variants;
}

Status ValidateLadderResults(const LadderResults& ladder) {
  std::vector<std::string> errors;
  auto error = [&](const LadderRun& run, const std::string& message) {
    if (errors.size() < 20) errors.push_back(Where(run) + ": " + message);
  };
  if (ladder.runs.empty()) return Status::InvalidArgument(ladder.source + ": no runs");
  const bool seeds = ladder.has_seeds();
  const bool seconds = ladder.has_seconds();
  // (variant, label, seed) -> first run; (variant, label) -> first run (for its compute).
  std::map<std::tuple<std::string, std::string, int64_t>, const LadderRun*> by_cell;
  std::map<std::pair<std::string, std::string>, const LadderRun*> by_point;
  for (const LadderRun& run : ladder.runs) {
    if (run.variant.empty()) error(run, "empty variant");
    if (run.label.empty()) error(run, "empty label");
    if (!std::isfinite(run.compute) || run.compute <= 0)
      error(run, "compute must be a positive number of FLOPs, got " + Num(run.compute));
    if (!std::isfinite(run.loss) || run.loss <= 0)
      error(run, "loss must be a positive number of nats, got " + Num(run.loss));
    if (run.seed.has_value() != seeds)
      error(run, seeds ? "no seed (other runs have one)" : "a seed (other runs have none)");
    if (run.seconds.has_value() != seconds)
      error(run, seconds ? "no seconds (other runs have them)" : "seconds (other runs have none)");
    if (run.seconds && (!std::isfinite(*run.seconds) || *run.seconds <= 0))
      error(run, "seconds must be positive, got " + Num(*run.seconds));
    if (run.parameters.has_value() != run.tokens.has_value()) error(run, "n without d, or d without n");
    if (run.parameters && (!std::isfinite(*run.parameters) || *run.parameters <= 0))
      error(run, "n must be a positive number of parameters, got " + Num(*run.parameters));
    if (run.tokens && (!std::isfinite(*run.tokens) || *run.tokens <= 0))
      error(run, "d must be a positive number of tokens, got " + Num(*run.tokens));
    auto cell = std::make_tuple(run.variant, run.label, run.seed.value_or(0));
    auto [cell_it, new_cell] = by_cell.emplace(cell, &run);
    if (!new_cell) {
      error(run, "duplicate run of variant '" + run.variant + "' at '" + run.label + "'" +
                     (seeds ? " seed " + std::to_string(run.seed.value_or(0)) : std::string()) + " (first at " +
                     Where(*cell_it->second) + ")" + (seeds ? "" : "; runs of several seeds need a seed column"));
    }
    auto [point_it, new_point] = by_point.emplace(std::make_pair(run.variant, run.label), &run);
    if (!new_point) {
      double first = point_it->second->compute;
      if (std::fabs(run.compute - first) > 1e-6 * std::max(std::fabs(first), std::fabs(run.compute))) {
        error(run, "compute " + Num(run.compute) + " differs from " + Num(first) + " of the same ladder point at " +
                       Where(*point_it->second) + " (all seeds of a point share its compute)");
      }
    }
  }
  // Two labels of one variant at the same compute make the curve vertical.
  std::map<std::pair<std::string, double>, const LadderRun*> by_compute;
  for (const auto& [key, run] : by_point) {
    auto [it, inserted] = by_compute.emplace(std::make_pair(key.first, run->compute), run);
    if (!inserted) {
      error(*run, "labels '" + it->second->label + "' and '" + run->label + "' of variant '" + key.first +
                      "' have the same compute " + Num(run->compute) + " (first at " + Where(*it->second) + ")");
    }
  }
  if (errors.empty()) return Status::Ok();
  std::string message = errors.front();
  for (size_t index = 1; index < errors.size(); ++index) message += "\n" + errors[index];
  return Status::InvalidArgument(message);
}

const LadderPoint* VariantCurve::Find(const std::string& label) const {
  for (const LadderPoint& point : points) {
    if (point.label == label) return &point;
  }
  return nullptr;
}

std::vector<VariantCurve> BuildCurves(const LadderResults& ladder) {
  std::vector<VariantCurve> curves;
  for (const std::string& variant : ladder.Variants()) {
    VariantCurve curve;
    curve.variant = variant;
    for (const LadderRun& run : ladder.runs) {
      if (run.variant != variant) continue;
      auto point = std::find_if(curve.points.begin(), curve.points.end(),
                                [&](const LadderPoint& existing) { return existing.label == run.label; });
      if (point == curve.points.end()) {
        curve.points.push_back(LadderPoint{run.label, run.compute, 0, 0, std::nullopt, {}});
        point = curve.points.end() - 1;
      }
      point->seeds[run.seed.value_or(0)] = SeedRun{run.loss, run.seconds};
    }
    for (LadderPoint& point : curve.points) {
      double n = static_cast<double>(point.seeds.size());
      double loss_sum = 0, seconds_sum = 0;
      bool has_seconds = true;
      for (const auto& [seed, run] : point.seeds) {
        loss_sum += run.loss;
        if (run.seconds)
          seconds_sum += *run.seconds;
        else
          has_seconds = false;
      }
      point.loss = loss_sum / n;
      if (has_seconds) point.seconds = seconds_sum / n;
      if (point.seeds.size() > 1) {
        double squares = 0;
        for (const auto& [seed, run] : point.seeds) squares += (run.loss - point.loss) * (run.loss - point.loss);
        point.loss_sd = std::sqrt(squares / (n - 1));
      }
    }
    std::sort(curve.points.begin(), curve.points.end(),
              [](const LadderPoint& a, const LadderPoint& b) { return a.compute < b.compute; });
    curves.push_back(std::move(curve));
  }
  return curves;
}

std::vector<CurvePoint> MeanCurve(const VariantCurve& curve) {
  std::vector<CurvePoint> points;
  for (const LadderPoint& point : curve.points) points.push_back({point.compute, point.loss, point.label});
  return points;
}

std::vector<CurvePoint> MeanSecondsCurve(const VariantCurve& curve) {
  std::vector<CurvePoint> points;
  for (const LadderPoint& point : curve.points) {
    if (!point.seconds) return {};
    points.push_back({*point.seconds, point.loss, point.label});
  }
  return points;
}

std::vector<CurvePoint> SeedCurve(const VariantCurve& curve, int64_t seed) {
  std::vector<CurvePoint> points;
  for (const LadderPoint& point : curve.points) {
    auto it = point.seeds.find(seed);
    if (it != point.seeds.end()) points.push_back({point.compute, it->second.loss, point.label});
  }
  return points;
}

std::optional<double> PointMeanWithout(const LadderPoint& point, int64_t seed) {
  double sum = 0;
  int count = 0;
  for (const auto& [id, run] : point.seeds) {
    if (id == seed) continue;
    sum += run.loss;
    ++count;
  }
  if (count == 0) return std::nullopt;
  return sum / count;
}

std::vector<CurvePoint> MeanCurveWithout(const VariantCurve& curve, int64_t seed) {
  std::vector<CurvePoint> points;
  for (const LadderPoint& point : curve.points) {
    if (std::optional<double> mean = PointMeanWithout(point, seed)) points.push_back({point.compute, *mean, point.label});
  }
  return points;
}

}  // namespace rung::fit
