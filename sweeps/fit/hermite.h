// sweeps/fit/hermite.h
//
// The smooth estimator of a compute multiplier: the baseline's ladder points joined by a monotone
// cubic Hermite curve in ln C (instead of the piecewise estimator's straight chords), inverted at the
// variant's loss.
//
// Why: a loss that falls as a power law, L = E + A C^-alpha, is convex in ln C, so the chord between
// two rungs lies above the curve and the piecewise estimator reads the baseline's compute too far
// right: with rungs 10x apart and alpha = 0.15 it reports 1.059 for a true 1.050 (docs/science.md,
// section 6). This curve passes through the same points with slopes that follow the curvature.
//
// The slope at each point is that of the exponential in ln C, L = E + A exp(-a ln C), through it and
// its neighbours (the first three points at the first, the last three at the last): exact when the
// baseline is a power law. Where a triple is not convex and falling (noise, a kink), the slope is
// Fritsch and Carlson's (the harmonic mean of the neighbouring chords' slopes, 0 at a turn). Every
// slope is then limited as Fritsch and Carlson limit it, so the curve falls wherever the points fall
// and never overshoots them. With two points the curve is the chord.
//
// A loss outside the points' range continues the curve along its tangent at the end point (the
// first point for a loss above the range, the last for one below), as the piecewise estimator
// continues its end chords. A baseline whose points do not fall strictly is left to the piecewise
// estimator: the inversion then is the piecewise one, and `how` says so.
//
// Example:
//   std::vector<CurvePoint> rope = {{1e15, 1.669, "L0"}, {1e16, 1.619, "L1"}, {1e17, 1.590, "L2"}};
//   PiecewiseInversion at = InvertHermite(rope, 1.640);  // at.x: where the curve reaches 1.640
//
// Thread safety: a function of its arguments.
#pragma once

#include <vector>

#include "sweeps/fit/ladder_results.h"
#include "sweeps/fit/piecewise.h"

namespace rung::fit {

// The baseline's compute at `loss` on the monotone cubic through its points; undefined (with why)
// where the piecewise estimator's would be, and where a tangent continued beyond the range is flat.
// `baseline` may come in any order, at distinct positive x.
PiecewiseInversion InvertHermite(const std::vector<CurvePoint>& baseline, double loss);

// The curve InvertHermite inverts, as a function of compute built once: the monotone cubic in ln x,
// continued by its end tangents, where the baseline falls strictly; else the polyline InvertPiecewise
// inverts (straight in ln x between the points, continued by the end segments). REQUIRES: 2 or more
// points at distinct positive x.
class HermiteCurve {
 public:
  // cubic false: always the polyline (the piecewise estimator's curve).
  explicit HermiteCurve(const std::vector<CurvePoint>& baseline, bool cubic = true);
  double At(double x) const;  // the loss at compute x

 private:
  bool falling_ = false;
  std::vector<double> x_, y_, slope_;  // ln x and loss of the points, the cubic's slopes
};

}  // namespace rung::fit
