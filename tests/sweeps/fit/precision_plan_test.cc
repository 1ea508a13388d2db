// tests/sweeps/fit/precision_plan_test.cc
#include "sweeps/fit/precision_plan.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rung::fit {
namespace {

std::vector<SyntheticVariant> Variants(double multiplier) {
  const std::vector<std::pair<std::string, double>> points = {{"L0", 1e15}, {"L1", 1e16}, {"L2", 1e17}};
  return {{"rope", 1.0, points}, {"lerope", multiplier, points}};
}

PlanSetting Setting(double sigma, double rho) {
  PlanSetting setting;
  setting.law = {std::log(30.0), 0.15, 1.5, 1.0};  // loss gap at CM 1.1: 0.0024 nats at L0
  setting.sigma = sigma;
  setting.rho = rho;
  setting.studies = 200;
  setting.threads = 2;
  return setting;
}

TEST(PrecisionPlan, MoreSeedsNarrowTheIntervalsAndRaiseThePower) {
  StatusOr<std::vector<PlanCell>> three = SimulatePlan(Variants(1.1), "rope", 3, Setting(0.002, 0.5));
  StatusOr<std::vector<PlanCell>> twelve = SimulatePlan(Variants(1.1), "rope", 12, Setting(0.002, 0.5));
  ASSERT_TRUE(three.ok()) << three.status().message();
  ASSERT_TRUE(twelve.ok()) << twelve.status().message();
  ASSERT_EQ(three->size(), 3u);  // lerope at L0..L2; none for the baseline
  // The interior points (L2's variant loss is below every baseline point: an extrapolation).
  for (size_t c = 0; c < 2; ++c) {
    const PlanCell& few = (*three)[c];
    const PlanCell& many = (*twelve)[c];
    EXPECT_EQ(few.variant, "lerope");
    ASSERT_TRUE(few.width_median && many.width_median);
    // t(2 df) sqrt(3) against t(11 df) sqrt(12): about 4.2 times narrower with 12 seeds.
    EXPECT_LT(*many.width_median, *few.width_median / 2.5) << few.label;
    EXPECT_GE(many.power, few.power) << few.label;
    EXPECT_LE(*few.width_p10, *few.width_median);
    EXPECT_LE(*few.width_median, *few.width_p90);
  }
}

// With no true difference the power is the rate of false claims: about 1 - level.
TEST(PrecisionPlan, AtMultiplierOneThePowerIsTheFalseClaimRate) {
  PlanSetting setting = Setting(0.002, 0.5);
  setting.studies = 600;
  StatusOr<std::vector<PlanCell>> cells = SimulatePlan(Variants(1.0), "rope", 5, setting);
  ASSERT_TRUE(cells.ok()) << cells.status().message();
  // Interior L0 and L1; 600 studies: a standard error of 0.009 around 0.05.
  for (size_t c = 0; c < 2; ++c) EXPECT_NEAR((*cells)[c].power, 0.05, 0.035) << (*cells)[c].label;
}

TEST(PrecisionPlan, TheSeedsNeededMeetThePowerAndOneSeedFewerDoesNot) {
  const PlanSetting setting = Setting(0.002, 0.5);
  StatusOr<std::vector<SeedsNeeded>> needed = FindSeedsNeeded(Variants(1.1), "rope", setting, 0.8, std::nullopt, 16);
  ASSERT_TRUE(needed.ok()) << needed.status().message();
  ASSERT_EQ(needed->size(), 3u);
  const SeedsNeeded& l0 = (*needed)[0];
  ASSERT_TRUE(l0.seeds.has_value());
  EXPECT_GE(l0.at.power, 0.8);
  EXPECT_EQ(l0.at.seeds, *l0.seeds);
  if (*l0.seeds > 2) {
    StatusOr<std::vector<PlanCell>> fewer = SimulatePlan(Variants(1.1), "rope", *l0.seeds - 1, setting);
    ASSERT_TRUE(fewer.ok());
    EXPECT_LT((*fewer)[0].power, 0.8);
  }
}

TEST(PrecisionPlan, AWidthTargetNeedsAtLeastTheSeedsOfThePowerAlone) {
  const PlanSetting setting = Setting(0.002, 0.5);
  StatusOr<std::vector<SeedsNeeded>> power = FindSeedsNeeded(Variants(1.1), "rope", setting, 0.5, std::nullopt, 12);
  StatusOr<std::vector<SeedsNeeded>> narrow = FindSeedsNeeded(Variants(1.1), "rope", setting, 0.5, 0.15, 12);
  ASSERT_TRUE(power.ok() && narrow.ok());
  ASSERT_TRUE((*power)[0].seeds.has_value()) << (*power)[0].at.power;
  ASSERT_TRUE((*narrow)[0].seeds.has_value()) << (*narrow)[0].at.width_median.value_or(-1);
  EXPECT_GE(*(*narrow)[0].seeds, *(*power)[0].seeds);
  EXPECT_LE(*(*narrow)[0].at.width_median, 0.15);
}

TEST(PrecisionPlan, IsReproducibleWhateverTheThreads) {
  PlanSetting one = Setting(0.01, 0.3);
  one.threads = 1;
  PlanSetting four = one;
  four.threads = 4;
  StatusOr<std::vector<PlanCell>> a = SimulatePlan(Variants(1.05), "rope", 4, one);
  StatusOr<std::vector<PlanCell>> b = SimulatePlan(Variants(1.05), "rope", 4, four);
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t c = 0; c < a->size(); ++c) {
    EXPECT_EQ((*a)[c].power, (*b)[c].power);
    EXPECT_EQ((*a)[c].width_median, (*b)[c].width_median);
  }
}

TEST(PrecisionPlan, RefusesWhatItCannotSimulate) {
  PlanSetting setting = Setting(0.01, 0.3);
  EXPECT_EQ(SimulatePlan(Variants(1.05), "rope", 1, setting).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SimulatePlan(Variants(1.05), "alibi", 3, setting).status().code(), StatusCode::kInvalidArgument);
  setting.sigma = 0;
  EXPECT_EQ(SimulatePlan(Variants(1.05), "rope", 3, setting).status().code(), StatusCode::kInvalidArgument);
  setting = Setting(0.01, 1.5);
  EXPECT_EQ(SimulatePlan(Variants(1.05), "rope", 3, setting).status().code(), StatusCode::kInvalidArgument);
  setting = Setting(0.01, 0.3);
  setting.estimator = Estimator::kPowerLawFixedE;
  EXPECT_EQ(SimulatePlan(Variants(1.05), "rope", 3, setting).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FindSeedsNeeded(Variants(1.05), "rope", Setting(0.01, 0.3), 0.8, std::nullopt, 1).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rung::fit
