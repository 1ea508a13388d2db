#include "sweeps/fit/piecewise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rung::fit {
namespace {

std::vector<CurvePoint> SortedByX(std::vector<CurvePoint> points) {
  std::sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  return points;
}

}  // namespace

std::string LossText(double loss) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4f", loss);
  return text;
}

PiecewiseInversion InvertPiecewise(const std::vector<CurvePoint>& baseline_in, double loss) {
  PiecewiseInversion result;
  std::vector<CurvePoint> points = SortedByX(baseline_in);
  const size_t n = points.size();
  if (n < 2) {
    result.why = "the baseline has " + std::to_string(n) + " ladder point(s); the piecewise estimator needs 2";
    return result;
  }
  for (size_t index = 0; index + 1 < n; ++index) {
    if (!(points[index].x < points[index + 1].x) || points[index].x <= 0) {
      result.why = "baseline ladder points " + points[index].label + " and " + points[index + 1].label +
                   " are not at distinct positive compute";
      return result;
    }
  }
  std::vector<double> lx(n);
  for (size_t index = 0; index < n; ++index) lx[index] = std::log(points[index].x);

  // Every solution of f(ln x) = loss, f the polyline continued by its end segments.
  struct Solution {
    double lx;
    double x;
    std::string how;
  };
  std::vector<Solution> solutions;
  bool flat_at_loss = false;
  // `exact`: the x of a ladder point, kept as given so that a point inverts to itself exactly.
  auto add = [&](double value, std::optional<double> exact, std::string how) {
    for (const Solution& existing : solutions) {
      if (std::fabs(existing.lx - value) <= 1e-12 * (1 + std::fabs(value))) return;  // a shared vertex
    }
    solutions.push_back({value, exact.value_or(std::exp(value)), std::move(how)});
  };
  for (size_t index = 0; index + 1 < n; ++index) {
    double l0 = points[index].loss, l1 = points[index + 1].loss;
    if (l0 == l1) {
      if (loss == l0) flat_at_loss = true;
      continue;
    }
    if (loss < std::min(l0, l1) || loss > std::max(l0, l1)) continue;
    double t = (loss - l0) / (l1 - l0);
    std::string how = t == 0   ? "at " + points[index].label
                      : t == 1 ? "at " + points[index + 1].label
                               : "between " + points[index].label + " and " + points[index + 1].label;
    std::optional<double> exact = t == 0   ? std::optional<double>(points[index].x)
                                  : t == 1 ? std::optional<double>(points[index + 1].x)
                                           : std::nullopt;
    add(lx[index] + t * (lx[index + 1] - lx[index]), exact, how);
  }
  const double first_slope = (points[1].loss - points[0].loss) / (lx[1] - lx[0]);
  const double last_slope = (points[n - 1].loss - points[n - 2].loss) / (lx[n - 1] - lx[n - 2]);
  const std::string first_segment = points[0].label + "-" + points[1].label;
  const std::string last_segment = points[n - 2].label + "-" + points[n - 1].label;
  if (first_slope != 0) {
    double value = lx[0] + (loss - points[0].loss) / first_slope;
    if (value < lx[0]) add(value, std::nullopt, "continues " + first_segment + " below " + points[0].label);
  }
  if (last_slope != 0) {
    double value = lx[n - 1] + (loss - points[n - 1].loss) / last_slope;
    if (value > lx[n - 1]) add(value, std::nullopt, "continues " + last_segment + " beyond " + points[n - 1].label);
  }

  if (flat_at_loss || solutions.size() > 1) {
    std::string where;
    for (const Solution& solution : solutions) where += (where.empty() ? "" : "; ") + solution.how;
    result.why = "the baseline is non-monotone: it " +
                 (flat_at_loss ? std::string("runs flat at loss ") + LossText(loss)
                               : "reaches loss " + LossText(loss) + " at " + std::to_string(solutions.size()) +
                                     " computes (" + where + ")");
    return result;
  }
  if (solutions.empty()) {
    double lowest = points[0].loss, highest = points[0].loss;
    for (const CurvePoint& point : points) {
      lowest = std::min(lowest, point.loss);
      highest = std::max(highest, point.loss);
    }
    if (loss < lowest) {
      result.why = "loss " + LossText(loss) + " is below the baseline's range [" + LossText(lowest) + ", " +
                   LossText(highest) + "] and its last segment (" + last_segment + ") is " +
                   (last_slope == 0 ? "flat" : "rising");
    } else if (loss > highest) {
      result.why = "loss " + LossText(loss) + " is above the baseline's range [" + LossText(lowest) + ", " +
                   LossText(highest) + "] and its first segment (" + first_segment + ") is " +
                   (first_slope == 0 ? "flat" : "rising");
    } else {
      // Inside the range a continuous polyline always reaches the loss; an end segment that turns
      // away from it is the only way here.
      result.why = "the baseline's continued end segments do not reach loss " + LossText(loss);
    }
    return result;
  }
  result.x = solutions.front().x;
  result.how = solutions.front().how;
  return result;
}

std::vector<std::string> NonMonotoneSteps(const std::vector<CurvePoint>& baseline) {
  std::vector<CurvePoint> points = SortedByX(baseline);
  std::vector<std::string> steps;
  for (size_t index = 0; index + 1 < points.size(); ++index) {
    if (points[index + 1].loss >= points[index].loss) {
      steps.push_back(points[index].label + " -> " + points[index + 1].label + " (" + LossText(points[index].loss) +
                      " -> " + LossText(points[index + 1].loss) + ")");
    }
  }
  return steps;
}

}  // namespace rung::fit
