// How many trials a spec may expand to (sweeps/spec/expansion_limits.h), and the keys two parts of a
// spec may not both set (sweeps/spec/axis_conflicts.h).
#include "sweeps/spec/expansion_limits.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "sweeps/spec/expansion.h"
#include "tests/sweeps/spec/spec_test_util.h"

namespace rung {
namespace {

using spec_testing::BaseSpec;
using spec_testing::Expand;

// `axes` list axes of `values` values each, over keys that need not be valid (nothing is built).
std::string ProductSpec(int axes, int values) {
  std::string text = BaseSpec() + "sweep:\n";
  for (int axis = 0; axis < axes; ++axis) {
    text += "  train.k" + std::to_string(axis) + ": [";
    for (int value = 0; value < values; ++value) text += (value == 0 ? "" : ", ") + std::to_string(value);
    text += "]\n";
  }
  return text;
}

TEST(ExpansionLimits, RefusesAHundredMillionCellsBeforeBuildingOne) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<ExpandedSweep> sweep = Expand(ProductSpec(4, 100));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(sweep.ok());
  EXPECT_EQ(sweep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sweep.status().message(),
            "1 error(s) in the sweep spec\n"
            "spec.yaml:5:1: error: sweep: the spec expands to 100000000 trials (1 rung(s) x 100000000 cells), more "
            "than the limit of 100000 trials (raise it with rung validate --max-trials N)");
  EXPECT_LT(seconds, 5.0);
}

TEST(ExpansionLimits, CountsRungsTimesCellsAgainstTheCallersLimit) {
  const std::string spec = BaseSpec() +
                           "ladder: {rungs: [{layers: 1, d_model: 16, heads: 2}, {layers: 2, d_model: 16, heads: 2}]}\n"
                           "sweep: {seed: [0, 1, 2]}\n";
  ExpansionLimits limits{5, "--max-trials-per-submission N"};
  StatusOr<ExpandedSweep> refused = ExpandSweepSpecText(spec, "spec.yaml", limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("expands to 6 trials (2 rung(s) x 3 cells), more than the limit of 5 "
                                            "trials (raise it with --max-trials-per-submission N)"),
            std::string::npos)
      << refused.status().message();
  limits.max_trials = 6;
  StatusOr<ExpandedSweep> admitted = ExpandSweepSpecText(spec, "spec.yaml", limits);
  ASSERT_TRUE(admitted.ok()) << admitted.status().message();
  EXPECT_EQ(admitted->trials.size(), 6u);
}

TEST(ExpansionLimits, ACountThatOverflowsInt64IsRefused) {
  StatusOr<ExpandedSweep> sweep = Expand(ProductSpec(10, 100));  // 10^20
  ASSERT_FALSE(sweep.ok());
  EXPECT_NE(sweep.status().message().find("the spec expands to more trials than an int64 counts, more than the limit"),
            std::string::npos)
      << sweep.status().message();
}

TEST(ExpansionLimits, RandomSamplesOverTheLimitAreRefusedBeforeTheyAreDrawn) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "sweep:\n"
                                         "  random:\n"
                                         "    samples: 100000000\n"
                                         "    axes: {train.lr: {log_uniform: [1.0e-4, 1.0e-2]}}\n");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(sweep.ok());
  EXPECT_NE(sweep.status().message().find("spec.yaml:7:5: error: sweep.random.samples: 100000000 samples are more "
                                          "than the limit of 100000 trials"),
            std::string::npos)
      << sweep.status().message();
  EXPECT_LT(seconds, 5.0);
}

TEST(AxisConflicts, TwoAxesOnOneKeyAreAnErrorNamingBoth) {
  StatusOr<ExpandedSweep> sweep =
      Expand(BaseSpec() +
             "sweep:\n"
             "  position.variant: [rope, lerope]\n"
             "  zip: [{position.variant: [prope, prope], position.fraction: [0.25, 0.5]}]\n");
  ASSERT_FALSE(sweep.ok());
  EXPECT_NE(sweep.status().message().find("spec.yaml:7:9: error: sweep: the zip group of position.fraction, "
                                          "position.variant and the axis sweep.position.variant (spec.yaml:6:3) both "
                                          "set position.variant"),
            std::string::npos)
      << sweep.status().message();
}

TEST(AxisConflicts, AMappingAxisConflictsWithAnAxisOnOneOfItsLeavesOnly) {
  const std::string xi_axis = "  inverse_temperature.xi: [0.25, 0.5]\n";
  StatusOr<ExpandedSweep> clash =
      Expand(BaseSpec() + "sweep:\n  inverse_temperature: [{form: log_power, xi: 0.5}, {form: qwen}]\n" + xi_axis);
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("both set inverse_temperature.xi"), std::string::npos)
      << clash.status().message();
  StatusOr<ExpandedSweep> apart =
      Expand(BaseSpec() + "sweep:\n  inverse_temperature: [{form: log_power}, {form: qwen}]\n" + xi_axis);
  EXPECT_TRUE(apart.ok()) << apart.status().message();
}

TEST(AxisConflicts, AnAxisOnAKeyTheDepthRulesSetIsAnError) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "ladder: {depths: [1, 2], head_dim: 8}\n"
                                         "sweep:\n"
                                         "  model.d_model: [16, 32]\n");
  ASSERT_FALSE(sweep.ok());
  EXPECT_NE(sweep.status().message().find("the axis sweep.model.d_model and the ladder's depth rules (ladder.depths)"),
            std::string::npos)
      << sweep.status().message();
}

}  // namespace
}  // namespace rung
