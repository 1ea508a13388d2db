// The precision block: what it reads, and where its errors point.
#include "sweeps/spec/precision_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sweeps/spec/spec_test_util.h"

namespace rung {
namespace {

using spec_testing::Expand;
using testing::HasSubstr;

// Two rungs, rope (the baseline) and lerope, three seeds.
std::string PrecisionLadderSpec(const std::string& precision, const std::string& seeds = "[0, 1, 2]",
                       const std::string& baseline = "baseline: {position.variant: rope}\n") {
  return "name: test\n" + baseline +
         "data: {source: builtin, seq_len: 32}\n"
         "train: {steps: 10, batch_size: 4}\n"
         "ladder:\n"
         "  rungs: [{label: small, layers: 1, d_model: 16, heads: 2}, {label: big, layers: 2, d_model: 16, heads: 2}]\n"
         "sweep:\n"
         "  position.variant: [rope, lerope]\n"
         "  seed: " +
         seeds + "\n" + precision;
}

std::string PrecisionError(const std::string& text) {
  StatusOr<ExpandedSweep> sweep = Expand(text);
  return sweep.ok() ? "" : std::string(sweep.status().message());
}

TEST(PrecisionSpec, ReadsEveryKeyOfTheBlock) {
  StatusOr<ExpandedSweep> sweep = Expand(PrecisionLadderSpec(
      "precision:\n"
      "  estimator: power_law_shared_e\n"
      "  target_half_width: 0.01\n"
      "  level: 0.9\n"
      "  at: [big]\n"
      "  budget_flops: 1e15\n"
      "  add: [seed]\n"
      "  in_flight: 3\n"));
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  const PrecisionSpec& precision = sweep->spec.precision;
  EXPECT_TRUE(precision.set);
  EXPECT_EQ(precision.estimator, "power_law_shared_e");
  EXPECT_DOUBLE_EQ(precision.target_half_width, 0.01);
  EXPECT_DOUBLE_EQ(precision.level, 0.9);
  EXPECT_EQ(precision.at, std::vector<std::string>{"big"});
  EXPECT_DOUBLE_EQ(precision.budget_flops, 1e15);
  EXPECT_EQ(precision.in_flight, 3);
}

TEST(PrecisionSpec, DefaultsAimWithHermiteAtEveryRung) {
  StatusOr<ExpandedSweep> sweep = Expand(PrecisionLadderSpec("precision: {target_half_width: 0.02, budget_flops: 1e15, at: all}\n"));
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  EXPECT_EQ(sweep->spec.precision.estimator, "hermite");
  EXPECT_DOUBLE_EQ(sweep->spec.precision.level, 0.95);
  EXPECT_TRUE(sweep->spec.precision.at.empty());
  EXPECT_EQ(sweep->spec.precision.in_flight, 2);
  EXPECT_FALSE(Expand(PrecisionLadderSpec("")).value().spec.precision.set);
}

TEST(PrecisionSpec, RefusesThePiecewiseEstimatorAndSaysWhy) {
  const std::string error =
      PrecisionError(PrecisionLadderSpec("precision:\n  estimator: piecewise\n  target_half_width: 0.01\n  budget_flops: 1e15\n"));
  EXPECT_THAT(error, HasSubstr("spec.yaml:"));
  EXPECT_THAT(error, HasSubstr("precision.estimator"));
  EXPECT_THAT(error, HasSubstr("chord bias"));
}

TEST(PrecisionSpec, NamesEachBadValueAtItsLocation) {
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {budget_flops: 1e15}\n")),
              HasSubstr("precision.target_half_width: missing"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01}\n")),
              HasSubstr("precision.budget_flops: missing"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: -1, budget_flops: 1e15}\n")),
              HasSubstr("precision.target_half_width"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01, budget_flops: 1e15, level: 1}\n")),
              HasSubstr("expected a level in (0, 1)"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01, budget_flops: 1e15, add: [rung]}\n")),
              HasSubstr("expected [seed]"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01, budget_flops: 1e15, in_flight: 0}\n")),
              HasSubstr("precision.in_flight"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01, budget_flops: 1e15, at: [huge]}\n")),
              HasSubstr("'huge' is not a rung label of the ladder; its labels: small, big"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01, budget_flops: 1e15, targt: 1}\n")),
              HasSubstr("targt"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: 3\n")), HasSubstr("expected {estimator"));
}

TEST(PrecisionSpec, NeedsABaselineTwoSeedsAndABudgetTheFirstDesignFits) {
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01, budget_flops: 1e15}\n", "[0]")),
              HasSubstr("starts with 1 seed(s): an interval needs 2"));
  EXPECT_THAT(PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01, budget_flops: 1e15}\n", "[0, 1]", "")),
              HasSubstr("the spec needs `baseline:`"));
  const std::string error = PrecisionError(PrecisionLadderSpec("precision: {target_half_width: 0.01, budget_flops: 10}\n"));
  EXPECT_THAT(error, HasSubstr("precision.budget_flops"));
  EXPECT_THAT(error, HasSubstr("is below the first design's"));
  EXPECT_THAT(error, HasSubstr("12 trials"));
}

TEST(PrecisionSpec, TheBaselineMustSelectOneVariant) {
  const std::string error = PrecisionError(
      "name: test\nbaseline: {position.variant: rope}\n"
      "data: {source: builtin, seq_len: 32}\ntrain: {steps: 10, batch_size: 4}\n"
      "ladder:\n  rungs: [{layers: 1, d_model: 16, heads: 2}, {layers: 2, d_model: 16, heads: 2}]\n"
      "sweep:\n  position.variant: [rope, lerope]\n  train.weight_decay: [0.0, 0.1]\n  seed: [0, 1, 2]\n"
      "precision: {target_half_width: 0.01, budget_flops: 1e15}\n");
  EXPECT_THAT(error, HasSubstr("baseline: selects the variants"));
  EXPECT_THAT(error, HasSubstr("narrow `baseline:`"));
}

}  // namespace
}  // namespace rung
