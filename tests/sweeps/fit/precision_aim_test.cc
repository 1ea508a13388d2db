// The decisions of a precision-aimed sweep (sweeps/fit/precision_aim.h) on hand-made ladders.
#include "sweeps/fit/precision_aim.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung::fit {
namespace {

using ::testing::HasSubstr;

// L_b(C) = 2 + 10 (C / 1e15)^-0.3 at C = 1e15, 1e16, 1e17 (labels a, b, c), the variant at L_b(1.05 C);
// seed s adds offset[s] to both variants' runs (pairing) and jitter * (-1)^(s + variant) to each.
struct LadderMaker {
  std::vector<double> computes = {1e15, 1e16, 1e17};
  std::vector<std::string> labels = {"a", "b", "c"};
  std::map<std::string, double> jitter = {{"a", 0.002}, {"b", 0.002}, {"c", 0.002}};
  int seeds = 3;

  static double Baseline(double compute) { return 2 + 10 * std::pow(compute / 1e15, -0.3); }

  AimState State() const {
    AimState state;
    state.baseline = "rope";
    const double offsets[] = {0.03, -0.02, 0.01, -0.015, 0.025, -0.005, 0.0, 0.02};
    for (size_t k = 0; k < labels.size(); ++k) {
      for (const std::string variant : {"rope", "lerope"}) {
        AimCell cell{variant, labels[k], computes[k], {}, {}};
        for (int s = 0; s < seeds; ++s) {
          const double clean = variant == "rope" ? Baseline(computes[k]) : Baseline(1.05 * computes[k]);
          const double sign = ((s + (variant == "rope" ? 0 : 1)) % 2 == 0) ? 1 : -1;
          const double jitter_here = jitter.at(labels[k]) * sign * (1 + 0.37 * s);
          state.ladder.runs.push_back({variant, labels[k], computes[k], clean + offsets[s] + jitter_here,
                                       static_cast<int64_t>(s), std::nullopt, ""});
          cell.seeds.insert(s);
          state.planned_flops += computes[k];
        }
        state.cells.push_back(cell);
      }
    }
    return state;
  }
};

PrecisionTarget Target(double half_width, double budget) {
  PrecisionTarget target;
  target.half_width = half_width;
  target.budget_flops = budget;
  target.in_flight = 1;
  return target;
}

TEST(PrecisionAim, ClosesAsMetWhenEveryIntervalIsNarrowEnoughAndNothingRuns) {
  const AimState state = LadderMaker().State();
  StatusOr<AimDecision> decision = AimPrecision(state, Target(10.0, 1e18));
  ASSERT_TRUE(decision.ok()) << decision.status().message();
  EXPECT_EQ(decision->status, AimStatus::kMet);
  EXPECT_TRUE(decision->additions.empty());
  ASSERT_EQ(decision->rows.size(), 3u);  // lerope at a, b, c
  for (const AimRow& row : decision->rows) {
    EXPECT_EQ(row.variant, "lerope");
    ASSERT_TRUE(row.half_width.has_value()) << row.label << ": " << row.note;
    EXPECT_TRUE(row.met);
  }
}

TEST(PrecisionAim, WaitsWhileTheTrialsInFlightFillItsSlots) {
  AimState state = LadderMaker().State();
  state.unfinished = 2;
  PrecisionTarget target = Target(1e-6, 1e20);
  target.in_flight = 2;
  StatusOr<AimDecision> decision = AimPrecision(state, target);
  ASSERT_TRUE(decision.ok());
  EXPECT_EQ(decision->status, AimStatus::kWaiting);
  EXPECT_TRUE(decision->additions.empty());
}

TEST(PrecisionAim, AddsTheNextSeedOfTheWidestRowWithItsBaselinePair) {
  LadderMaker maker;
  maker.jitter["a"] = 0.02;  // label a is ten times noisier: its interval is the widest
  const AimState state = maker.State();
  StatusOr<AimDecision> decision = AimPrecision(state, Target(1e-6, 1e20));
  ASSERT_TRUE(decision.ok()) << decision.status().message();
  EXPECT_EQ(decision->status, AimStatus::kAiming);
  ASSERT_FALSE(decision->additions.empty());
  const AimAddition& first = decision->additions.front();
  EXPECT_EQ(first.label, "a");
  EXPECT_EQ(first.seed, 3);  // the smallest seed the cell has not run
  EXPECT_THAT(first.why, HasSubstr("lerope at a"));
  // The pair: the variant's run and the baseline's of the same seed, one decision step.
  ASSERT_EQ(decision->additions.size(), 2u);
  EXPECT_EQ(decision->additions[0].variant, "lerope");
  EXPECT_EQ(decision->additions[1].variant, "rope");
  EXPECT_EQ(decision->additions[1].seed, 3);
  EXPECT_DOUBLE_EQ(decision->planned_flops, state.planned_flops + 2e15);
}

TEST(PrecisionAim, ReusesABaselineSeedThatIsAlreadyThere) {
  LadderMaker maker;
  maker.jitter["a"] = 0.02;
  AimState state = maker.State();
  for (AimCell& cell : state.cells) {
    if (cell.variant == "rope" && cell.label == "a") {
      cell.seeds.insert(3);  // planned for another variant, not finished
      cell.unfinished.insert(3);
    }
  }
  state.unfinished = 1;
  PrecisionTarget target = Target(1e-6, 1e20);
  target.in_flight = 2;
  StatusOr<AimDecision> decision = AimPrecision(state, target);
  ASSERT_TRUE(decision.ok());
  ASSERT_EQ(decision->additions.size(), 1u);
  EXPECT_EQ(decision->additions[0].variant, "lerope");
  EXPECT_EQ(decision->additions[0].seed, 3);
}

TEST(PrecisionAim, LeavesOutASeedWhoseBaselinePairIsStillRunning) {
  AimState state = LadderMaker().State();
  // lerope's seed 3 at a has finished, far from the others; rope's seed 3 there still runs.
  state.ladder.runs.push_back({"lerope", "a", 1e15, LadderMaker::Baseline(1.05e15) + 0.5, int64_t{3}, std::nullopt, ""});
  for (AimCell& cell : state.cells) {
    if (cell.label != "a") continue;
    cell.seeds.insert(3);
    if (cell.variant == "rope") cell.unfinished.insert(3);
  }
  state.unfinished = 1;
  StatusOr<AimDecision> decision = AimPrecision(state, Target(10.0, 1e20));
  ASSERT_TRUE(decision.ok());
  for (const AimRow& row : decision->rows) {
    if (row.label == "a") EXPECT_EQ(row.seeds, 3) << "the unpaired seed is not read";
  }
  EXPECT_EQ(decision->status, AimStatus::kWaiting);  // met so far, but a trial runs
}

TEST(PrecisionAim, ClosesOnTheBudgetAndSaysWhatOneMoreSeedCosts) {
  const AimState state = LadderMaker().State();
  StatusOr<AimDecision> decision = AimPrecision(state, Target(1e-6, state.planned_flops));
  ASSERT_TRUE(decision.ok());
  EXPECT_EQ(decision->status, AimStatus::kBudget);
  EXPECT_THAT(decision->why, HasSubstr("FLOPs for one more seed"));
  EXPECT_THAT(decision->why, HasSubstr("of budget_flops"));
  EXPECT_TRUE(IsClosed(decision->status));
}

TEST(PrecisionAim, WaitsForAFitWhileTrialsRunAndClosesWithoutOne) {
  AimState state = LadderMaker().State();
  state.ladder.runs.clear();
  state.unfinished = 3;
  StatusOr<AimDecision> waiting = AimPrecision(state, Target(0.01, 1e20));
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->status, AimStatus::kWaiting);
  EXPECT_THAT(waiting->why, HasSubstr("no fit yet"));
  state.unfinished = 0;
  StatusOr<AimDecision> closed = AimPrecision(state, Target(0.01, 1e20));
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->status, AimStatus::kNoFit);
}

TEST(PrecisionAim, IsAFunctionOfItsInputs) {
  LadderMaker maker;
  maker.jitter["b"] = 0.03;
  const AimState state = maker.State();
  StatusOr<AimDecision> first = AimPrecision(state, Target(1e-6, 1e20));
  StatusOr<AimDecision> second = AimPrecision(state, Target(1e-6, 1e20));
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_EQ(first->additions.size(), second->additions.size());
  for (size_t i = 0; i < first->additions.size(); ++i) {
    EXPECT_EQ(first->additions[i].variant, second->additions[i].variant);
    EXPECT_EQ(first->additions[i].label, second->additions[i].label);
    EXPECT_EQ(first->additions[i].seed, second->additions[i].seed);
  }
}

TEST(PrecisionAim, RefusesABadTarget) {
  const AimState state = LadderMaker().State();
  PrecisionTarget target = Target(0.01, 1e20);
  target.in_flight = 0;
  EXPECT_EQ(AimPrecision(state, target).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(AimPrecision(state, Target(0, 1e20)).status().code(), StatusCode::kInvalidArgument);
  target = Target(0.01, 1e20);
  target.estimator = Estimator::kPiecewise;
  EXPECT_EQ(AimPrecision(state, target).status().code(), StatusCode::kInvalidArgument);
  AimState other = state;
  other.baseline = "alibi";
  EXPECT_THAT(AimPrecision(other, Target(0.01, 1e20)).status().message(), HasSubstr("'alibi' is not a variant"));
}

}  // namespace
}  // namespace rung::fit
