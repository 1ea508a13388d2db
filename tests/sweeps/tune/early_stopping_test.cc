#include "sweeps/tune/early_stopping.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung {
namespace {

EvaluatedTrial Trial(int64_t id, std::vector<double> values, int64_t tokens_per_eval = 100, int64_t total = 1000) {
  EvaluatedTrial trial;
  trial.trial_id = id;
  trial.total_tokens = total;
  for (size_t i = 0; i < values.size(); ++i) {
    trial.val_loss.push_back({static_cast<int64_t>(i + 1), static_cast<int64_t>(i + 1) * tokens_per_eval, values[i]});
  }
  trial.asha_metric = trial.val_loss;
  return trial;
}

TEST(DivergenceStop, StopsTheFirstEvaluationAboveFactorTimesTheFirst) {
  std::optional<EarlyStopDecision> decision = DivergenceDecision({1.5}, Trial(1, {4.0, 3.0, 5.0, 7.0}));
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->reason, "diverged");
  EXPECT_EQ(decision->step, 4);
  EXPECT_DOUBLE_EQ(decision->value, 7.0);
  EXPECT_DOUBLE_EQ(decision->compared_to, 6.0);
  EXPECT_THAT(decision->detail, testing::HasSubstr("exceeds 1.5 x its first evaluation 4"));
}

TEST(DivergenceStop, StopsANonFiniteEvaluationAndLeavesAHealthyCurveAlone) {
  EXPECT_TRUE(DivergenceDecision({1.5}, Trial(1, {4.0, NAN})).has_value());
  EXPECT_FALSE(DivergenceDecision({1.5}, Trial(1, {4.0, 3.0, 5.9, 2.0})).has_value());
  EXPECT_FALSE(DivergenceDecision({1.5}, Trial(1, {})).has_value());
}

TEST(AshaStop, StopsAllButTheBestThirdOnceThreeTrialsReachedAMilestone) {
  AshaStop stop;  // reduction 3 at 0.25 and 0.5
  // 1000 tokens a run: 0.25 is the evaluation at 300 tokens (the first at or after 250)
  std::vector<EvaluatedTrial> cell = {Trial(1, {5, 4, 3.0}), Trial(2, {5, 4, 2.0}), Trial(3, {5, 4, 3.5})};
  EXPECT_TRUE(AshaDecision(stop, cell, 0).has_value());
  EXPECT_FALSE(AshaDecision(stop, cell, 1).has_value());
  std::optional<EarlyStopDecision> worst = AshaDecision(stop, cell, 2);
  ASSERT_TRUE(worst.has_value());
  EXPECT_EQ(worst->reason, "asha");
  EXPECT_EQ(worst->step, 3);
  EXPECT_DOUBLE_EQ(worst->value, 3.5);
  EXPECT_DOUBLE_EQ(worst->compared_to, 2.0);
  EXPECT_THAT(worst->detail, testing::HasSubstr("ranks 3 of 3"));
}

TEST(AshaStop, WaitsUntilReductionTrialsReachedTheMilestone) {
  AshaStop stop;
  std::vector<EvaluatedTrial> cell = {Trial(1, {5, 4, 3.0}), Trial(2, {5, 4, 2.0}), Trial(3, {5, 4})};
  // the third has not reached 0.25 of its run: only two did
  EXPECT_FALSE(AshaDecision(stop, cell, 0).has_value());
  EXPECT_FALSE(AshaDecision(stop, cell, 2).has_value());
}

TEST(AshaStop, JudgesEachMilestoneAmongTheTrialsThatReachedIt) {
  AshaStop stop;
  stop.reduction = 2;
  // at 0.25 (300 tokens) trial 1 is best of 2; at 0.5 (500 tokens) it is worst of 2
  std::vector<EvaluatedTrial> cell = {Trial(1, {5, 4, 2.0, 2.0, 3.0}), Trial(2, {5, 4, 2.5, 2.4, 2.0})};
  std::optional<EarlyStopDecision> decision = AshaDecision(stop, cell, 0);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->step, 5);
  EXPECT_FALSE(AshaDecision(stop, cell, 1).has_value() && AshaDecision(stop, cell, 1)->step == 5);
}

}  // namespace
}  // namespace rung
