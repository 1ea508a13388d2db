#include "sweeps/fit/hermite.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

namespace rung::fit {
namespace {

// The exponential y = e + b exp(-a x) through three points at increasing x, when they are falling and
// convex (each chord's slope less steep than the one before); nullopt otherwise. Returns a.
std::optional<double> ExponentialRate(const double x[3], const double y[3]) {
  const double s01 = (y[1] - y[0]) / (x[1] - x[0]);
  const double s12 = (y[2] - y[1]) / (x[2] - x[1]);
  if (!(s01 < s12 && s12 < 0)) return std::nullopt;
  // Solve g(a) = (y0 - y1) / (y1 - y2) for g(a) = (exp(-a x0) - exp(-a x1)) / (exp(-a x1) - exp(-a x2))
  // = (e^{a h0} - 1) / (1 - e^{-a h1}): h0/h1 as a -> 0 and growing with a; the target is above h0/h1
  // by convexity, so bisection on a bracket found by doubling.
  const double target = (y[0] - y[1]) / (y[1] - y[2]);
  const double h0 = x[1] - x[0], h1 = x[2] - x[1];
  auto g = [&](double a) { return std::expm1(a * h0) / -std::expm1(-a * h1); };
  double low = 0, high = 1;
  while (g(high) < target) {
    high *= 2;
    if (high > 1e6) return std::nullopt;
  }
  for (int step = 0; step < 200 && high - low > 1e-15 * high; ++step) {
    const double mid = 0.5 * (low + high);
    (g(mid) < target ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

// The slope at x[i] of the exponential through points (j, j+1, j+2), or nullopt.
std::optional<double> ExponentialSlope(const std::vector<double>& x, const std::vector<double>& y, size_t j,
                                       size_t i) {
  const double xs[3] = {x[j], x[j + 1], x[j + 2]};
  const double ys[3] = {y[j], y[j + 1], y[j + 2]};
  const std::optional<double> a = ExponentialRate(xs, ys);
  if (!a) return std::nullopt;
  // b exp(-a x) relative to the middle point: y - e = (y0 - y1) / (exp(-a (x0 - x1)) - 1) * exp(-a (x - x1)).
  const double scale = (ys[0] - ys[1]) / std::expm1(-*a * (xs[0] - xs[1]));
  return -*a * scale * std::exp(-*a * (x[i] - xs[1]));
}

// Fritsch and Carlson's slope at interior point i: the weighted harmonic mean of the chords' slopes,
// 0 where they differ in sign.
double HarmonicSlope(const std::vector<double>& x, const std::vector<double>& y, size_t i) {
  const double h0 = x[i] - x[i - 1], h1 = x[i + 1] - x[i];
  const double d0 = (y[i] - y[i - 1]) / h0, d1 = (y[i + 1] - y[i]) / h1;
  if (d0 * d1 <= 0) return 0;
  const double w0 = 2 * h1 + h0, w1 = h1 + 2 * h0;
  return (w0 + w1) / (w0 / d0 + w1 / d1);
}

// The slopes at every point of a strictly falling curve (n >= 2), limited so that each cubic piece
// falls monotonically.
std::vector<double> MonotoneSlopes(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  std::vector<double> chord(n - 1);
  for (size_t k = 0; k + 1 < n; ++k) chord[k] = (y[k + 1] - y[k]) / (x[k + 1] - x[k]);
  std::vector<double> slope(n);
  if (n == 2) return {chord[0], chord[0]};
  for (size_t i = 0; i < n; ++i) {
    const size_t first = i == 0 ? 0 : std::min(i - 1, n - 3);
    std::optional<double> exponential = ExponentialSlope(x, y, first, i);
    if (exponential) {
      slope[i] = *exponential;
    } else if (i == 0 || i == n - 1) {
      slope[i] = chord[i == 0 ? 0 : n - 2];
    } else {
      slope[i] = HarmonicSlope(x, y, i);
    }
    slope[i] = std::min(slope[i], 0.0);
  }
  // Fritsch and Carlson's limit: on each piece, (m_k, m_k+1) / chord inside the circle of radius 3.
  for (size_t k = 0; k + 1 < n; ++k) {
    const double alpha = slope[k] / chord[k], beta = slope[k + 1] / chord[k];
    const double radius = std::hypot(alpha, beta);
    if (radius > 3) {
      slope[k] = 3 * alpha / radius * chord[k];
      slope[k + 1] = 3 * beta / radius * chord[k];
    }
  }
  return slope;
}

// The cubic Hermite piece on [x0, x1] at x.
double HermiteAt(double x0, double x1, double y0, double y1, double m0, double m1, double x) {
  const double h = x1 - x0, t = (x - x0) / h;
  const double t2 = t * t, t3 = t2 * t;
  return (2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * h * m0 + (-2 * t3 + 3 * t2) * y1 + (t3 - t2) * h * m1;
}

// A baseline's points sorted by compute, with ln compute and loss of each, and whether they fall
// strictly at distinct positive compute: the monotone cubic's condition (otherwise the estimator is
// the piecewise one).
struct LogCurve {
  std::vector<CurvePoint> points;
  std::vector<double> x, y;
  bool falling = false;
};

LogCurve LogCurveOf(const std::vector<CurvePoint>& baseline) {
  LogCurve curve;
  curve.points = baseline;
  std::vector<CurvePoint>& points = curve.points;
  std::sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  const size_t n = points.size();
  curve.falling = n >= 2 && points[0].x > 0;
  for (size_t k = 0; curve.falling && k + 1 < n; ++k) {
    curve.falling = points[k].x < points[k + 1].x && points[k + 1].loss < points[k].loss;
  }
  for (const CurvePoint& point : points) {
    curve.x.push_back(std::log(point.x));
    curve.y.push_back(point.loss);
  }
  return curve;
}

}  // namespace

HermiteCurve::HermiteCurve(const std::vector<CurvePoint>& baseline, bool cubic) {
  LogCurve curve = LogCurveOf(baseline);
  falling_ = cubic && curve.falling;
  x_ = std::move(curve.x);
  y_ = std::move(curve.y);
  if (falling_) slope_ = MonotoneSlopes(x_, y_);
}

double HermiteCurve::At(double at) const {
  const size_t n = x_.size();
  const double lx = std::log(at);
  size_t k = 0;  // the piece: the first one below the points, the last one beyond them
  while (k + 2 < n && lx > x_[k + 1]) ++k;
  if (!falling_) return y_[k] + (y_[k + 1] - y_[k]) * (lx - x_[k]) / (x_[k + 1] - x_[k]);
  if (lx <= x_[0]) return y_[0] + slope_[0] * (lx - x_[0]);
  if (lx >= x_[n - 1]) return y_[n - 1] + slope_[n - 1] * (lx - x_[n - 1]);
  return HermiteAt(x_[k], x_[k + 1], y_[k], y_[k + 1], slope_[k], slope_[k + 1], lx);
}

PiecewiseInversion InvertHermite(const std::vector<CurvePoint>& baseline_in, double loss) {
  const LogCurve curve = LogCurveOf(baseline_in);
  if (!curve.falling) {
    PiecewiseInversion chord = InvertPiecewise(baseline_in, loss);
    if (chord.defined()) chord.how = "piecewise (the baseline does not fall strictly): " + chord.how;
    return chord;
  }
  const std::vector<CurvePoint>& points = curve.points;
  const std::vector<double>& x = curve.x;
  const std::vector<double>& y = curve.y;
  const size_t n = points.size();
  const std::vector<double> slope = MonotoneSlopes(x, y);
  PiecewiseInversion result;
  for (size_t k = 0; k < n; ++k) {
    if (loss == y[k]) {
      result.x = points[k].x;  // a ladder point inverts to itself exactly
      result.how = "at " + points[k].label;
      return result;
    }
  }
  if (loss > y[0] || loss < y[n - 1]) {
    const bool above = loss > y[0];
    const size_t end = above ? 0 : n - 1;
    if (slope[end] == 0) {
      result.why = "loss " + LossText(loss) + " is " + (above ? "above" : "below") +
                   " the baseline's range and its curve runs flat at " + points[end].label;
      return result;
    }
    result.x = std::exp(x[end] + (loss - y[end]) / slope[end]);
    result.how = "continues the tangent at " + points[end].label + (above ? " below it" : " beyond it");
    return result;
  }
  size_t k = 0;
  while (!(y[k] > loss && loss > y[k + 1])) ++k;
  double low = x[k], high = x[k + 1];  // the piece falls monotonically from y[k] to y[k + 1]
  for (int step = 0; step < 200 && high - low > 1e-14 * std::fabs(high); ++step) {
    const double mid = 0.5 * (low + high);
    (HermiteAt(x[k], x[k + 1], y[k], y[k + 1], slope[k], slope[k + 1], mid) > loss ? low : high) = mid;
  }
  result.x = std::exp(0.5 * (low + high));
  result.how = "between " + points[k].label + " and " + points[k + 1].label;
  return result;
}

}  // namespace rung::fit
