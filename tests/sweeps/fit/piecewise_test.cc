// The piecewise estimator against values computed by hand. The baseline falls by 1 nat over the
// first decade of compute and by 0.5 nat over the second, so every inversion is a power of ten.
#include "sweeps/fit/piecewise.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rung::fit {
namespace {

const std::vector<CurvePoint> kBaseline = {{1e10, 4.0, "r1"}, {1e11, 3.0, "r2"}, {1e12, 2.5, "r3"}};

TEST(Piecewise, InterpolatesInLogComputeInsideTheRange) {
  // 3.5 is halfway from 4.0 to 3.0 in loss, so halfway from 1e10 to 1e11 in ln C: 10^10.5.
  PiecewiseInversion at = InvertPiecewise(kBaseline, 3.5);
  ASSERT_TRUE(at.defined()) << at.why;
  EXPECT_NEAR(at.x.value(), std::pow(10.0, 10.5), 1e-6 * std::pow(10.0, 10.5));
  EXPECT_EQ(at.how, "between r1 and r2");
  // 2.75 is halfway down the second segment: 10^11.5.
  EXPECT_NEAR(InvertPiecewise(kBaseline, 2.75).x.value(), std::pow(10.0, 11.5), 1e-6 * std::pow(10.0, 11.5));
  // 3.3 is 70% of the way to 3.0 in loss: 10^(10 + 0.7).
  EXPECT_NEAR(InvertPiecewise(kBaseline, 3.3).x.value(), std::pow(10.0, 10.7), 1e-6 * std::pow(10.0, 10.7));
}

TEST(Piecewise, ALossAtALadderPointGivesItsCompute) {
  PiecewiseInversion at = InvertPiecewise(kBaseline, 3.0);
  ASSERT_TRUE(at.defined());
  EXPECT_DOUBLE_EQ(at.x.value(), 1e11);
  EXPECT_EQ(at.how, "at r2");
  EXPECT_DOUBLE_EQ(InvertPiecewise(kBaseline, 4.0).x.value(), 1e10);
  EXPECT_DOUBLE_EQ(InvertPiecewise(kBaseline, 2.5).x.value(), 1e12);
}

TEST(Piecewise, ALossAboveTheRangeContinuesTheFirstSegment) {
  // First segment: -1 nat per decade. 4.5 is half a decade before r1: 10^9.5.
  PiecewiseInversion at = InvertPiecewise(kBaseline, 4.5);
  ASSERT_TRUE(at.defined()) << at.why;
  EXPECT_NEAR(at.x.value(), std::pow(10.0, 9.5), 1e-6 * std::pow(10.0, 9.5));
  EXPECT_EQ(at.how, "continues r1-r2 below r1");
}

TEST(Piecewise, ALossBelowTheRangeContinuesTheLastSegment) {
  // Last segment: -0.5 nat per decade. 2.0 is a decade beyond r3: 1e13.
  PiecewiseInversion at = InvertPiecewise(kBaseline, 2.0);
  ASSERT_TRUE(at.defined()) << at.why;
  EXPECT_NEAR(at.x.value(), 1e13, 1e-6 * 1e13);
  EXPECT_EQ(at.how, "continues r2-r3 beyond r3");
}

TEST(Piecewise, TheOrderOfThePointsDoesNotMatter) {
  std::vector<CurvePoint> shuffled = {kBaseline[2], kBaseline[0], kBaseline[1]};
  EXPECT_DOUBLE_EQ(InvertPiecewise(shuffled, 3.5).x.value(), InvertPiecewise(kBaseline, 3.5).x.value());
}

TEST(Piecewise, AFlatLastSegmentCannotBeContinuedBelowTheRange) {
  std::vector<CurvePoint> flat = {{1e10, 4.0, "r1"}, {1e11, 3.0, "r2"}, {1e12, 3.0, "r3"}};
  PiecewiseInversion at = InvertPiecewise(flat, 2.9);
  EXPECT_FALSE(at.defined());
  EXPECT_NE(at.why.find("below the baseline's range"), std::string::npos) << at.why;
  EXPECT_NE(at.why.find("last segment (r2-r3) is flat"), std::string::npos) << at.why;
}

TEST(Piecewise, ARisingLastSegmentCannotBeContinuedBelowTheRange) {
  std::vector<CurvePoint> rising = {{1e10, 4.0, "r1"}, {1e11, 3.0, "r2"}, {1e12, 3.2, "r3"}};
  PiecewiseInversion at = InvertPiecewise(rising, 2.9);
  EXPECT_FALSE(at.defined());
  EXPECT_NE(at.why.find("last segment (r2-r3) is rising"), std::string::npos) << at.why;
}

TEST(Piecewise, ARisingFirstSegmentCannotBeContinuedAboveTheRange) {
  std::vector<CurvePoint> rising = {{1e10, 3.5, "r1"}, {1e11, 4.0, "r2"}, {1e12, 3.0, "r3"}};
  PiecewiseInversion at = InvertPiecewise(rising, 4.2);
  EXPECT_FALSE(at.defined());
  EXPECT_NE(at.why.find("above the baseline's range"), std::string::npos) << at.why;
  EXPECT_NE(at.why.find("first segment (r1-r2) is rising"), std::string::npos) << at.why;
}

TEST(Piecewise, ANonMonotoneBaselineIsUndefinedWhereItReachesALossMoreThanOnce) {
  std::vector<CurvePoint> bumpy = {{1e10, 4.0, "r1"}, {1e11, 3.0, "r2"}, {1e12, 3.5, "r3"}, {1e13, 2.0, "r4"}};
  PiecewiseInversion twice = InvertPiecewise(bumpy, 3.2);
  EXPECT_FALSE(twice.defined());
  EXPECT_NE(twice.why.find("non-monotone"), std::string::npos) << twice.why;
  EXPECT_NE(twice.why.find("at 3 computes"), std::string::npos) << twice.why;
  // 3.8 is reached once only (on r1-r2, 20% of the way): 10^10.2.
  PiecewiseInversion once = InvertPiecewise(bumpy, 3.8);
  ASSERT_TRUE(once.defined()) << once.why;
  EXPECT_NEAR(once.x.value(), std::pow(10.0, 10.2), 1e-6 * std::pow(10.0, 10.2));
  // A flat stretch at exactly the loss is ambiguous too.
  std::vector<CurvePoint> flat = {{1e10, 4.0, "r1"}, {1e11, 3.0, "r2"}, {1e12, 3.0, "r3"}, {1e13, 2.0, "r4"}};
  PiecewiseInversion on_flat = InvertPiecewise(flat, 3.0);
  EXPECT_FALSE(on_flat.defined());
  EXPECT_NE(on_flat.why.find("runs flat at loss 3.0000"), std::string::npos) << on_flat.why;
}

TEST(Piecewise, NeedsTwoBaselinePoints) {
  PiecewiseInversion at = InvertPiecewise({{1e10, 4.0, "r1"}}, 3.5);
  EXPECT_FALSE(at.defined());
  EXPECT_NE(at.why.find("needs 2"), std::string::npos) << at.why;
}

TEST(Piecewise, ListsTheStepsWhereTheBaselineDoesNotFall) {
  std::vector<CurvePoint> bumpy = {{1e10, 4.0, "r1"}, {1e11, 3.0, "r2"}, {1e12, 3.5, "r3"}, {1e13, 2.0, "r4"}};
  EXPECT_EQ(NonMonotoneSteps(bumpy), (std::vector<std::string>{"r2 -> r3 (3.0000 -> 3.5000)"}));
  EXPECT_TRUE(NonMonotoneSteps(kBaseline).empty());
}

}  // namespace
}  // namespace rung::fit
