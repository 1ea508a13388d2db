// The ladder's IsoFLOP grid (sweeps/spec/ladder.h, isoflop_budgets): every size x every budget is a
// rung, each trial's recorded FLOPs within 1% of its budget, and every way a spec can get it wrong
// refused at its file:line:col.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/model_arithmetic.h"
#include "sweeps/spec/isoflop.h"
#include "tests/sweeps/spec/spec_test_util.h"

namespace rung {
namespace {

using spec_testing::Expand;
using ::testing::HasSubstr;

// Two sizes (L1-d16, L2-d32) x three budgets x two variants; 128 tokens a step.
//   line 8: "  isoflop_budgets: [1.0e9, 3.0e9, 1.5e9]" (values at columns 21, 28, 35)
std::string IsoflopSpec(const std::string& budgets = "[1.0e9, 3.0e9, 1.5e9]", const std::string& more = "") {
  return "name: iso\n"
         "data: {source: builtin, seq_len: 32}\n"
         "model: {mlp: gelu}\n"
         "train: {batch_size: 4}\n"
         "ladder:\n"
         "  depths: [1, 2]\n"
         "  head_dim: 16\n"
         "  isoflop_budgets: " +
         budgets +
         "\n"
         "sweep:\n"
         "  position.variant: [rope, lerope]\n" +
         more;
}

std::string GridErrors(const std::string& text, const ExpansionLimits& limits = {}) {
  StatusOr<ExpandedSweep> sweep = ExpandSweepSpecText(text, "spec.yaml", limits);
  EXPECT_FALSE(sweep.ok());
  if (sweep.ok()) return "";
  EXPECT_EQ(sweep.status().code(), StatusCode::kInvalidArgument);
  return sweep.status().message();
}

// 6 N_nonembedding D as the fits count it (sweeps/fit/compute_count.h), from the trial's own model.
double IsoflopRecordedFlops(const ExpandedTrial& trial) {
  return 6.0 * static_cast<double>(CountParameters(trial.config.model).nonembedding()) *
         static_cast<double>(trial.config.train.steps * TokensPerStep(trial.config.train, trial.config.data.seq_len));
}

TEST(IsoflopLadder, EverySizeMeetsEveryBudgetInSizeThenBudgetOrder) {
  StatusOr<ExpandedSweep> sweep = Expand(IsoflopSpec());
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  EXPECT_EQ(sweep->spec.ladder.rungs.size(), 6u);
  const std::vector<std::string> labels = {"L1-d16-C1e9", "L1-d16-C3e9", "L1-d16-C1.5e9",
                                           "L2-d32-C1e9", "L2-d32-C3e9", "L2-d32-C1.5e9"};
  ASSERT_EQ(sweep->trials.size(), 12u);
  for (size_t index = 0; index < sweep->trials.size(); ++index) {
    const ExpandedTrial& trial = sweep->trials[index];
    EXPECT_EQ(trial.rung_label, labels[index / 2]) << index;
    EXPECT_EQ(trial.rung, static_cast<int64_t>(index / 2));
    EXPECT_EQ(trial.config.model.position.variant, index % 2 == 0 ? "rope" : "lerope");
    EXPECT_EQ(trial.config.model.layers, index < 6 ? 1 : 2);
  }
}

TEST(IsoflopLadder, EveryTrialsRecordedFlopsLieWithinOnePercentOfItsBudgetAtTheNearestWholeStep) {
  StatusOr<ExpandedSweep> sweep = Expand(IsoflopSpec());
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  const double budgets[] = {1.0e9, 3.0e9, 1.5e9};
  for (const ExpandedTrial& trial : sweep->trials) {
    const double budget = budgets[trial.rung % 3];
    EXPECT_DOUBLE_EQ(trial.flops, IsoflopRecordedFlops(trial)) << trial.rung_label;
    EXPECT_LE(std::fabs(trial.flops - budget) / budget, 0.01) << trial.rung_label << ": " << trial.flops;
    // No other whole number of steps comes nearer.
    const double per_step = trial.flops / static_cast<double>(trial.config.train.steps);
    for (int64_t other : {trial.config.train.steps - 1, trial.config.train.steps + 1}) {
      EXPECT_GE(std::fabs(per_step * static_cast<double>(other) - budget), std::fabs(trial.flops - budget))
          << trial.rung_label << " at " << other << " steps";
    }
    EXPECT_EQ(trial.tokens, trial.config.train.steps * 128);
  }
  // L2-d32: N = 24576, 6 N x 128 tokens = 18874368 FLOPs a step; 1e9 / that = 52.98.
  EXPECT_EQ(sweep->trials[6].config.train.steps, 53);
  EXPECT_EQ(sweep->trials[7].config.train.steps, 53);  // LeRoPE: its positional parameters do not count
}

TEST(IsoflopLadder, CellsWhoseNonembeddingCountsDifferEachGetTheirOwnSteps) {
  StatusOr<ExpandedSweep> sweep = Expand(
      "name: iso\n"
      "data: {source: builtin, seq_len: 32}\n"
      "train: {batch_size: 4}\n"
      "ladder:\n"
      "  depths: [2]\n"
      "  head_dim: 16\n"
      "  isoflop_budgets: [2.0e9]\n"
      "sweep:\n"
      "  model.mlp: [gelu, swiglu]\n"
      "  train.batch_size: [4, 8]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 4u);
  std::set<int64_t> steps, counts;
  for (const ExpandedTrial& trial : sweep->trials) {
    steps.insert(trial.config.train.steps);
    counts.insert(trial.parameters.nonembedding());
    EXPECT_DOUBLE_EQ(trial.flops, IsoflopRecordedFlops(trial));
    EXPECT_LE(std::fabs(trial.flops - 2.0e9) / 2.0e9, 0.01) << trial.config.model.mlp << " " << trial.flops;
  }
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_EQ(steps.size(), 4u);
}

TEST(IsoflopLadder, ExplicitRungsKeepTheirLabelsAndALadderListHasOneValuePerSize) {
  StatusOr<ExpandedSweep> sweep = Expand(
      "name: iso\n"
      "data: {source: builtin, seq_len: 32}\n"
      "train: {batch_size: 4}\n"
      "ladder:\n"
      "  rungs:\n"
      "    - {label: small, layers: 1, d_model: 16, heads: 1}\n"
      "    - {label: big, layers: 2, d_model: 32, heads: 2, train: {lr: 1.0e-3}}\n"
      "  isoflop_budgets: [2.5e10, 1.0e10]\n"
      "  batch_size: [8, 16]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 4u);
  EXPECT_EQ(sweep->trials[0].rung_label, "small-C2.5e10");
  EXPECT_EQ(sweep->trials[1].rung_label, "small-C1e10");
  EXPECT_EQ(sweep->trials[2].rung_label, "big-C2.5e10");
  EXPECT_EQ(sweep->trials[3].rung_label, "big-C1e10");
  EXPECT_EQ(sweep->trials[1].config.train.batch_size, 8);
  EXPECT_EQ(sweep->trials[2].config.train.batch_size, 16);
  EXPECT_EQ(sweep->trials[3].config.train.batch_size, 16);
  EXPECT_DOUBLE_EQ(sweep->trials[3].config.train.lr, 1.0e-3);
  for (const ExpandedTrial& trial : sweep->trials) {
    const double budget = trial.rung % 2 == 0 ? 2.5e10 : 1.0e10;
    EXPECT_LE(std::fabs(trial.flops - budget) / budget, 0.01) << trial.rung_label;
  }
}

TEST(IsoflopLadder, ALadderListWithOneValuePerGridRungIsAnError) {
  const std::string errors = GridErrors(IsoflopSpec("[1.0e9, 3.0e9, 1.5e9]\n  lr: [1.0e-3, 1.0e-3, 1.0e-3, 1.0e-3, 1.0e-3, 1.0e-3]"));
  EXPECT_THAT(errors, HasSubstr("spec.yaml:9:3: error: ladder.lr: has 6 values for 2 model sizes")) << errors;
}

TEST(IsoflopLadder, ABudgetNoWholeStepReachesIsAnErrorAtTheBudgetWithTheNearestAndWhatToChange) {
  // L4-d64: N = 196608, 128 tokens a step: 1.51e8 FLOPs a step; 1e9 needs 6.62 steps (7: +5.7%).
  const std::string errors = GridErrors(
      "name: iso\n"
      "data: {source: builtin, seq_len: 32}\n"
      "train: {batch_size: 4}\n"
      "ladder:\n"
      "  depths: [1, 4]\n"
      "  head_dim: 16\n"
      "  isoflop_budgets: [1.0e10, 1.0e9]\n");
  EXPECT_THAT(errors, HasSubstr("spec.yaml:7:29: error: ladder.isoflop_budgets[1]: rung L4-d64-C1e9: no whole number "
                                "of train.steps brings 6 N_nonembedding D within 1% of the budget 1e9 FLOPs "
                                "(N_nonembedding 196608, 128 tokens a step, 1.51e+08 FLOPs a step): the nearest, 7 "
                                "step(s), gives 1.06e+09 FLOPs, +5.7%; use a smaller train.batch_size or "
                                "data.seq_len (fewer tokens a step), or a larger budget"))
      << errors;
  // The other rungs are fine: one error only.
  EXPECT_THAT(errors, HasSubstr("1 error(s)")) << errors;
}

TEST(IsoflopLadder, ABudgetPastWhatInt64TokensCountIsAnErrorAtTheBudget) {
  const std::string errors = GridErrors(IsoflopSpec("[1.0e9, 1.0e300]"));
  EXPECT_THAT(errors, HasSubstr("spec.yaml:8:28: error: ladder.isoflop_budgets[1]: rung L1-d16-C1e300: no whole number"))
      << errors;
  EXPECT_THAT(errors, HasSubstr("the budget needs more tokens than an int64 counts: a smaller budget or a larger model"))
      << errors;
}

TEST(IsoflopLadder, BudgetsMustBeFinitePositiveNumbersEachErrorAtItsValue) {
  const std::string errors = GridErrors(IsoflopSpec("[1.0e9, 0, -3.0e9, .inf, abc, .nan]"));
  for (const char* at : {"8:28", "8:31", "8:39", "8:45", "8:50"}) {
    EXPECT_THAT(errors, HasSubstr(std::string("spec.yaml:") + at + ": error: ladder.isoflop_budgets["))
        << at << "\n"
        << errors;
  }
  EXPECT_THAT(errors, HasSubstr("spec.yaml:8:28: error: ladder.isoflop_budgets[1]: expected a finite number of "
                                "training FLOPs > 0, e.g. 3.0e11"))
      << errors;
  EXPECT_THAT(errors, HasSubstr("spec.yaml:8:39: error: ladder.isoflop_budgets[3]: expected a finite number")) << errors;
}

TEST(IsoflopLadder, ARepeatedBudgetIsAnErrorAtTheRepeatNamingTheFirst) {
  const std::string errors = GridErrors(IsoflopSpec("[1.0e9, 3.0e9, 1e9]"));
  EXPECT_THAT(errors, HasSubstr("spec.yaml:8:35: error: ladder.isoflop_budgets[2]: repeats the budget 1e9 of "
                                "ladder.isoflop_budgets[0] (spec.yaml:8:21)"))
      << errors;
}

TEST(IsoflopLadder, AtMostSixtyFourBudgetsTheFirstPastThemIsTheError) {
  std::string budgets = "\n";
  for (int index = 0; index < 65; ++index) budgets += "    - " + std::to_string(index + 1) + ".0e9\n";
  budgets.pop_back();
  // Budget k is on line 9 + k, its value at column 7.
  const std::string errors = GridErrors(IsoflopSpec(budgets));
  EXPECT_THAT(errors, HasSubstr("spec.yaml:73:7: error: ladder.isoflop_budgets[64]: at most 64 budgets (65 are listed"))
      << errors;
}

TEST(IsoflopLadder, AnEmptyOrScalarBudgetListIsAnErrorAtTheKey) {
  for (const std::string& budgets : {"[]", "1.0e9", "{a: 1}"}) {
    const std::string errors = GridErrors(IsoflopSpec(budgets));
    EXPECT_THAT(errors, HasSubstr("spec.yaml:8:3: error: ladder.isoflop_budgets: expected a non-empty list of training "
                                  "FLOPs"))
        << budgets << "\n"
        << errors;
  }
}

TEST(IsoflopLadder, TokensPerParamAndBudgetsTogetherAreAnErrorNamingBoth) {
  const std::string errors = GridErrors(IsoflopSpec("[1.0e9]\n  tokens_per_param: 20"));
  EXPECT_THAT(errors, HasSubstr("spec.yaml:8:3: error: ladder.isoflop_budgets: ladder.isoflop_budgets and "
                                "ladder.tokens_per_param (spec.yaml:9:3) both set train.tokens"))
      << errors;
}

TEST(IsoflopLadder, AnAxisOnStepsOrTokensIsAnErrorNamingBoth) {
  for (const std::string& key : {"train.steps", "train.tokens"}) {
    const std::string errors = GridErrors(IsoflopSpec("[1.0e9]", "  " + key + ": [100, 200]\n"));
    EXPECT_THAT(errors, HasSubstr("spec.yaml:11:3: error: sweep: the axis sweep." + key +
                                  " and the ladder rule ladder.isoflop_budgets (spec.yaml:8:3) both set " + key))
        << errors;
  }
}

TEST(IsoflopLadder, ARungsOwnStepsOrTokensAreAnErrorAtThemNamingTheBudgets) {
  const std::string errors = GridErrors(
      "name: iso\n"
      "data: {source: builtin, seq_len: 32}\n"
      "train: {batch_size: 4}\n"
      "ladder:\n"
      "  rungs:\n"
      "    - {layers: 1, d_model: 16, heads: 1, train: {tokens: 5000}}\n"
      "    - {layers: 2, d_model: 32, heads: 2, train: {lr: 1.0e-3, steps: 50}}\n"
      "  isoflop_budgets: [1.0e9]\n");
  EXPECT_THAT(errors, HasSubstr("spec.yaml:6:50: error: ladder.rungs[0].train.tokens: rung L1-d16 sets train.tokens, "
                                "which ladder.isoflop_budgets (spec.yaml:8:3) sets for every rung from its budget"))
      << errors;
  EXPECT_THAT(errors, HasSubstr("spec.yaml:7:62: error: ladder.rungs[1].train.steps: rung L2-d32 sets train.steps"))
      << errors;
}

TEST(IsoflopLadder, AGridOverTheTrialLimitIsRefusedBeforeItIsBuilt) {
  const std::string errors = GridErrors(IsoflopSpec(), ExpansionLimits{5, "--max-trials N"});
  EXPECT_THAT(errors, HasSubstr("spec.yaml:8:3: error: ladder.isoflop_budgets: the grid has 6 rungs (2 model sizes x 3 "
                                "budgets), more than the limit of 5 trials"))
      << errors;
}

// What sweeps/examples/scaling-laws.yaml's header says of it.
TEST(IsoflopLadder, TheScalingLawsExampleIsFourSizesByThreeBudgetsWithTheOptimaInsideAndAHundredStepsEach) {
  StatusOr<ExpandedSweep> sweep = LoadSweepSpec(std::string(RUNG_SOURCE_DIR) + "/sweeps/examples/scaling-laws.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  const std::vector<double>& budgets = sweep->spec.ladder.isoflop_budgets;
  ASSERT_EQ(budgets.size(), 3u);
  ASSERT_EQ(sweep->spec.ladder.rungs.size(), 12u);
  ASSERT_EQ(sweep->trials.size(), 24u);
  double smallest = 1e300, largest = 0;
  for (const ExpandedTrial& trial : sweep->trials) {
    const double budget = budgets[static_cast<size_t>(trial.rung) % 3];
    EXPECT_LE(std::fabs(trial.flops - budget) / budget, 0.01) << trial.rung_label;
    EXPECT_GE(trial.config.train.steps, 100) << trial.rung_label;
    smallest = std::min(smallest, static_cast<double>(trial.parameters.nonembedding()));
    largest = std::max(largest, static_cast<double>(trial.parameters.nonembedding()));
  }
  // The optimum at about 150 tokens per parameter (the header's; D = 150 N: C = 900 N^2) inside the sizes.
  for (double budget : budgets) {
    EXPECT_GT(std::sqrt(budget / 900), smallest) << budget;
    EXPECT_LT(std::sqrt(budget / 900), largest) << budget;
  }
}

TEST(IsoflopLadder, ABudgetIsWrittenInItsShortestExactForm) {
  EXPECT_EQ(CompactBudgetText(3.0e11), "3e11");
  EXPECT_EQ(CompactBudgetText(1.5e11), "1.5e11");
  EXPECT_EQ(CompactBudgetText(1.0e12), "1e12");
  EXPECT_EQ(CompactBudgetText(2.5e-3), "2.5e-3");
  EXPECT_EQ(CompactBudgetText(123456789.0), "1.23456789e8");
  EXPECT_EQ(CompactBudgetText(7.0), "7e0");
  // Distinct budgets, distinct labels: the text reads back as the same double.
  const double third = 1.0e12 / 3.0;
  EXPECT_EQ(std::strtod(CompactBudgetText(third).c_str(), nullptr), third);
  EXPECT_NE(CompactBudgetText(third), CompactBudgetText(std::nextafter(third, 1e13)));
}

TEST(IsoflopLadder, TheNearestStepsAreTheWholeNumberNearestTheQuotient) {
  // 1000 FLOPs a token, 10 tokens a step: 1e4 FLOPs a step.
  IsoflopSteps steps = NearestIsoflopSteps(1.234e6, 1000.0, 10);
  EXPECT_EQ(steps.steps, 123);
  EXPECT_DOUBLE_EQ(steps.flops, 1.23e6);
  EXPECT_TRUE(steps.within_tolerance);
  steps = NearestIsoflopSteps(1.236e6, 1000.0, 10);
  EXPECT_EQ(steps.steps, 124);
  // Under half a step: one step, far over the budget.
  steps = NearestIsoflopSteps(3.0e3, 1000.0, 10);
  EXPECT_EQ(steps.steps, 1);
  EXPECT_FALSE(steps.within_tolerance);
  EXPECT_NEAR(steps.relative_error, 1e4 / 3e3 - 1, 1e-12);
  EXPECT_FALSE(steps.at_token_limit);
  // 50.5 steps: 50 and 51 lie 0.99% off, within; 40.5 steps: 40 and 41 lie 1.23% off, not.
  EXPECT_TRUE(NearestIsoflopSteps(5.05e5, 1000.0, 10).within_tolerance);
  EXPECT_FALSE(NearestIsoflopSteps(4.05e5, 1000.0, 10).within_tolerance);
  // More tokens than int64 counts: the most steps whose tokens it does.
  steps = NearestIsoflopSteps(1e300, 1.0, 1000000000);
  EXPECT_TRUE(steps.at_token_limit);
  EXPECT_FALSE(steps.within_tolerance);
  EXPECT_EQ(steps.steps, INT64_MAX / 1000000000);
  steps = NearestIsoflopSteps(1e300, 1.0, 1);  // no step past int64's end
  EXPECT_TRUE(steps.at_token_limit);
  EXPECT_GE(steps.steps, INT64_MAX - 1);
}

}  // namespace
}  // namespace rung
