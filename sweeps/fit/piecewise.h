// sweeps/fit/piecewise.h
//
// The piecewise estimator of a compute multiplier (docs/science.md section 6.1, the primary one): join the
// baseline's ladder points (ln C, L) with straight lines in ln C, and invert at the variant's loss.
// A loss outside the baseline's range continues the nearest segment: above the range (worse than
// the smallest baseline run) the first segment, below it (better than the largest) the last one.
// No fitting and no residual at measured points.
//
// The inversion is a value, never an error: where it is undefined the result says why.
//   - fewer than two baseline points;
//   - the loss is outside the range and the segment continued there is flat or rising, so it never
//     reaches that loss;
//   - the baseline is non-monotone and reaches the loss at more than one compute (or runs flat at it).
// A non-monotone baseline still inverts a loss it reaches exactly once.
//
// Example:
//   std::vector<CurvePoint> rope = {{1e10, 4.0, "r1"}, {1e11, 3.0, "r2"}, {1e12, 2.5, "r3"}};
//   PiecewiseInversion at = InvertPiecewise(rope, 3.5);  // at.x == 10^10.5 (halfway in ln C)
//   double cm = at.x.value() / variant_compute;
//
// The same function gives the wall-clock multiplier with seconds as x.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sweeps/fit/ladder_results.h"

namespace rung::fit {

struct PiecewiseInversion {
  std::optional<double> x;  // the baseline's compute (or seconds) at the loss; empty when undefined
  std::string how;          // where it was read: "between r1 and r2", "continues r3-r4 beyond r4", "at r2"
  std::string why;          // why it is undefined; empty when defined
  bool defined() const { return x.has_value(); }
};

// The baseline's x at `loss`. `baseline` may come in any order; x must be > 0 and distinct
// (ValidateLadderResults guarantees it for compute).
PiecewiseInversion InvertPiecewise(const std::vector<CurvePoint>& baseline, double loss);

// A loss as the estimators' messages print it: 4 decimals ("3.1416").
std::string LossText(double loss);

// Ladder points where the baseline's loss does not fall as x grows, as "r2 -> r3 (3.100 -> 3.120)";
// empty for a strictly falling baseline.
std::vector<std::string> NonMonotoneSteps(const std::vector<CurvePoint>& baseline);

}  // namespace rung::fit
