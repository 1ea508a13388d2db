// The hermite estimator (sweeps/fit/hermite.h): on power-law losses it recovers a known multiplier
// where the piecewise estimator's chords are biased; it passes through the points, falls wherever
// they fall, and falls back or says why where it cannot.
#include "sweeps/fit/hermite.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sweeps/fit/piecewise.h"

namespace rung::fit {
namespace {

struct PowerLawSurface {
  double e, a, alpha;
  double Loss(double compute) const { return e + a * std::pow(compute, -alpha); }
};

// The two curvatures of the precision bench: the paper-like one and a steeper one equal at 1e15 FLOPs.
const PowerLawSurface kPaper{1.5, 30, 0.15};
const PowerLawSurface kSteep{1.5, 30 * std::pow(1e15, -0.15) / std::pow(1e15, -0.3), 0.3};

std::vector<CurvePoint> Rungs(const PowerLawSurface& surface, int count) {
  std::vector<CurvePoint> points;
  for (int k = 0; k < count; ++k) {
    const double compute = 1e15 * std::pow(10.0, k);
    points.push_back({compute, surface.Loss(compute), "L" + std::to_string(k)});
  }
  return points;
}

TEST(Hermite, RecoversAKnownMultiplierOnPowerLawsWhereTheChordIsBiased) {
  const double truth = 1.05;
  for (const PowerLawSurface& surface : {kPaper, kSteep}) {
    const std::vector<CurvePoint> baseline = Rungs(surface, 4);
    for (int k = 0; k < 3; ++k) {  // the rungs whose variant loss the baseline's points bracket
      const double compute = baseline[k].x;
      const double variant_loss = surface.Loss(truth * compute);
      const PiecewiseInversion smooth = InvertHermite(baseline, variant_loss);
      const PiecewiseInversion chord = InvertPiecewise(baseline, variant_loss);
      ASSERT_TRUE(smooth.defined()) << smooth.why;
      ASSERT_TRUE(chord.defined()) << chord.why;
      EXPECT_NEAR(*smooth.x / compute, truth, 1e-4 * truth) << "rung " << k << " alpha " << surface.alpha;
      EXPECT_GT(*chord.x / compute, truth * 1.008) << "the chord's bias this estimator removes";
    }
  }
}

TEST(Hermite, ALadderPointInvertsToItselfExactly) {
  const std::vector<CurvePoint> baseline = Rungs(kPaper, 5);
  for (const CurvePoint& point : baseline) {
    const PiecewiseInversion at = InvertHermite(baseline, point.loss);
    ASSERT_TRUE(at.defined());
    EXPECT_EQ(*at.x, point.x);
    EXPECT_EQ(at.how, "at " + point.label);
  }
}

TEST(Hermite, FallsWhereverThePointsFallEvenWhenTheyAreNotConvex) {
  // A kink and a nearly flat step: the limited slopes keep every piece monotone.
  const std::vector<CurvePoint> baseline = {
      {1e15, 3.00, "a"}, {1e16, 2.99, "b"}, {1e17, 2.40, "c"}, {1e18, 2.39, "d"}, {1e19, 2.00, "e"}};
  double previous_x = 0;
  for (double loss = 2.9999; loss > 2.0001; loss -= 0.0005) {
    const PiecewiseInversion at = InvertHermite(baseline, loss);
    ASSERT_TRUE(at.defined()) << loss << ": " << at.why;
    EXPECT_GT(*at.x, previous_x) << "at loss " << loss;
    previous_x = *at.x;
  }
}

TEST(Hermite, TwoPointsAreTheChord) {
  const std::vector<CurvePoint> baseline = {{1e15, 3.0, "a"}, {1e17, 2.0, "b"}};
  const PiecewiseInversion smooth = InvertHermite(baseline, 2.5);
  const PiecewiseInversion chord = InvertPiecewise(baseline, 2.5);
  ASSERT_TRUE(smooth.defined() && chord.defined());
  EXPECT_NEAR(*smooth.x, *chord.x, 1e-9 * *chord.x);
}

TEST(Hermite, BeyondTheRangeContinuesTheEndTangent) {
  const std::vector<CurvePoint> baseline = Rungs(kPaper, 4);
  const PiecewiseInversion beyond = InvertHermite(baseline, baseline.back().loss - 0.001);
  ASSERT_TRUE(beyond.defined()) << beyond.why;
  EXPECT_GT(*beyond.x, baseline.back().x);
  EXPECT_EQ(beyond.how, "continues the tangent at L3 beyond it");
  const PiecewiseInversion before = InvertHermite(baseline, baseline.front().loss + 0.001);
  ASSERT_TRUE(before.defined()) << before.why;
  EXPECT_LT(*before.x, baseline.front().x);
  EXPECT_EQ(before.how, "continues the tangent at L0 below it");
}

TEST(Hermite, ABaselineThatDoesNotFallIsLeftToThePiecewiseEstimator) {
  const std::vector<CurvePoint> baseline = {{1e15, 3.0, "a"}, {1e16, 2.5, "b"}, {1e17, 2.6, "c"}, {1e18, 2.0, "d"}};
  const PiecewiseInversion at = InvertHermite(baseline, 2.2);
  const PiecewiseInversion chord = InvertPiecewise(baseline, 2.2);
  ASSERT_TRUE(at.defined()) << at.why;
  EXPECT_EQ(*at.x, *chord.x);
  EXPECT_EQ(at.how, "piecewise (the baseline does not fall strictly): " + chord.how);
  const PiecewiseInversion twice = InvertHermite(baseline, 2.55);  // reached twice: undefined, as piecewise
  EXPECT_FALSE(twice.defined());
  EXPECT_EQ(twice.why, InvertPiecewise(baseline, 2.55).why);
}

// HermiteCurve is the curve the inversions invert: at the compute InvertHermite (InvertPiecewise for
// the chords) returns for a loss, inside the points' range and beyond it, it gives that loss back.
TEST(Hermite, TheCurveGivesBackTheLossItsInversionWasAskedFor) {
  const std::vector<CurvePoint> falling = Rungs(kPaper, 4);
  const std::vector<CurvePoint> not_falling = {{1e15, 3.0, "a"}, {1e16, 2.5, "b"}, {1e17, 2.6, "c"}, {1e18, 2.0, "d"}};
  for (double loss : {falling[0].loss + 0.01, 2.0, falling[2].loss, falling[3].loss - 0.001}) {
    const PiecewiseInversion smooth = InvertHermite(falling, loss);
    ASSERT_TRUE(smooth.defined()) << smooth.why;
    EXPECT_NEAR(HermiteCurve(falling).At(*smooth.x), loss, 1e-12) << loss;
    const PiecewiseInversion chord = InvertPiecewise(falling, loss);
    ASSERT_TRUE(chord.defined()) << chord.why;
    EXPECT_NEAR(HermiteCurve(falling, false).At(*chord.x), loss, 1e-12) << loss;
  }
  const PiecewiseInversion at = InvertHermite(not_falling, 2.2);  // the chords, as the inversion falls back
  ASSERT_TRUE(at.defined()) << at.why;
  EXPECT_NEAR(HermiteCurve(not_falling).At(*at.x), 2.2, 1e-12);
  EXPECT_DOUBLE_EQ(HermiteCurve(not_falling).At(1e17), 2.6);
}

}  // namespace
}  // namespace rung::fit
