#include "core/config/lr_schedule.h"

#include <gtest/gtest.h>

namespace rung {
namespace {

TEST(LearningRateSchedule, CosineWarmsUpLinearlyThenDecaysToTheFloor) {
  ScheduleConfig schedule;
  schedule.name = "cosine";
  schedule.warmup_steps = 4;
  schedule.final_lr_fraction = 0.0;
  EXPECT_DOUBLE_EQ(LearningRateMultiplier(schedule, 0, 104), 0.2);
  EXPECT_DOUBLE_EQ(LearningRateMultiplier(schedule, 3, 104), 0.8);
  EXPECT_DOUBLE_EQ(LearningRateMultiplier(schedule, 4, 104), 1.0);
  EXPECT_NEAR(LearningRateMultiplier(schedule, 4 + 99 / 2.0, 104), 0.5, 0.02);
  EXPECT_NEAR(LearningRateMultiplier(schedule, 103, 104), 0.0, 1e-12);
}

TEST(LearningRateSchedule, WsdHoldsThePeakThenDecaysLinearlyOverTheLastFraction) {
  ScheduleConfig schedule;
  schedule.name = "wsd";
  schedule.warmup_steps = 10;
  schedule.decay_fraction = 0.1;
  schedule.final_lr_fraction = 0.1;
  EXPECT_DOUBLE_EQ(LearningRateMultiplier(schedule, 50, 100), 1.0);
  EXPECT_DOUBLE_EQ(LearningRateMultiplier(schedule, 89, 100), 1.0);
  EXPECT_DOUBLE_EQ(LearningRateMultiplier(schedule, 90, 100), 1.0);
  EXPECT_NEAR(LearningRateMultiplier(schedule, 99, 100), 0.1, 1e-12);
  double mid = LearningRateMultiplier(schedule, 95, 100);
  EXPECT_GT(mid, 0.1);
  EXPECT_LT(mid, 1.0);
}

TEST(LearningRateSchedule, ConstantStaysAtThePeakAfterWarmup) {
  ScheduleConfig schedule;
  schedule.name = "constant";
  schedule.warmup_steps = 0;
  EXPECT_DOUBLE_EQ(LearningRateMultiplier(schedule, 0, 10), 1.0);
  EXPECT_DOUBLE_EQ(LearningRateMultiplier(schedule, 9, 10), 1.0);
}

}  // namespace
}  // namespace rung
