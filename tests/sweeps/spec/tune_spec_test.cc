// The tune and early_stop blocks: what they read and where their errors point.
#include "sweeps/spec/tune_spec.h"

#include <cfloat>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sweeps/spec/spec_test_util.h"

namespace rung {
namespace {

using spec_testing::BaseSpec;
using spec_testing::Expand;
using testing::HasSubstr;

std::string ExpansionError(const std::string& text) {
  StatusOr<ExpandedSweep> sweep = Expand(text);
  return sweep.ok() ? "" : std::string(sweep.status().message());
}

const std::string kAxes = "sweep:\n  position.variant: [rope, nope]\n  seed: [0, 1]\n";

TEST(TuneSpec, ReadsEveryKeyOfTheBlock) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() + kAxes +
                                         "tune:\n"
                                         "  train.lr:\n"
                                         "    grid: {ratio: 2.0, anchor: 0.5}\n"
                                         "    center: 3e-3\n"
                                         "    start: 5\n"
                                         "    max_points: 7\n"
                                         "    per: [rung, position.variant]\n"
                                         "    seeds: all\n"
                                         "    predict: none\n"
                                         "early_stop:\n"
                                         "  divergence: {factor: 2}\n"
                                         "  asha: {metric: val_loss, reduction: 4, at: [0.5]}\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  const TuneSpec& tune = sweep->spec.tune;
  EXPECT_TRUE(tune.set);
  EXPECT_EQ(tune.key, "train.lr");
  EXPECT_DOUBLE_EQ(tune.ratio, 2.0);
  EXPECT_DOUBLE_EQ(tune.anchor, 0.5);
  EXPECT_EQ(tune.start, 5);
  EXPECT_EQ(tune.max_points, 7);
  EXPECT_TRUE(tune.tune_every_seed);
  EXPECT_FALSE(tune.predict);
  EXPECT_EQ(tune.per, (std::vector<std::string>{"rung", "position.variant"}));
  ASSERT_TRUE(sweep->spec.early_stop.divergence.has_value());
  EXPECT_DOUBLE_EQ(sweep->spec.early_stop.divergence->factor, 2.0);
  ASSERT_TRUE(sweep->spec.early_stop.asha.has_value());
  EXPECT_EQ(sweep->spec.early_stop.asha->reduction, 4);
  EXPECT_EQ(sweep->spec.early_stop.asha->at, std::vector<double>{0.5});
}

TEST(TuneSpec, SnapsValuesToTheGridOnTheLogScale) {
  TuneSpec tune;
  tune.ratio = std::sqrt(2.0);
  tune.anchor = 1.0;
  EXPECT_EQ(tune.NearestIndex(1.0), 0);
  EXPECT_EQ(tune.NearestIndex(0.5), -2);
  EXPECT_EQ(tune.NearestIndex(tune.ValueAt(-17)), -17);
  EXPECT_EQ(tune.NearestIndex(3e-3), -17);  // 2^(-17/2) = 2.76e-3, the nearest of 2^(-8) and 2^(-9)
}

TEST(TuneSpec, ErrorsNameTheLineAndColumnOfTheOffendingValue) {
  const std::string errors = ExpansionError(BaseSpec() + kAxes +
                                      "tune:\n"
                                      "  train.lr:\n"
                                      "    grid: {ratio: 0.5}\n"
                                      "    center: 3e-3\n"
                                      "    start: 4\n"
                                      "    until: converged\n"
                                      "    per: [rung, position.varaint]\n"
                                      "    seeds: some\n"
                                      "    extrapolate_above: L9-d1\n"
                                      "    maxpoints: 3\n");
  EXPECT_THAT(errors, HasSubstr("spec.yaml:10:12: error: tune.train.lr.grid.ratio: expected a number > 1"));
  EXPECT_THAT(errors, HasSubstr("spec.yaml:12:5: error: tune.train.lr.start: expected an odd count"));
  EXPECT_THAT(errors, HasSubstr("tune.train.lr.until: the only rule is `bracketed`"));
  EXPECT_THAT(errors, HasSubstr("'position.varaint' is not a sweep axis (did you mean 'position.variant'?)"));
  EXPECT_THAT(errors, HasSubstr("tune.train.lr.seeds: must be first or all"));
  EXPECT_THAT(errors, HasSubstr("'L9-d1' is not a rung label of the ladder"));
  EXPECT_THAT(errors, HasSubstr("tune.train.lr.maxpoints: unknown key (did you mean 'max_points'?)"));
}

TEST(TuneSpec, TheKeyTunedIsSetByTheSearchAlone) {
  EXPECT_THAT(ExpansionError(BaseSpec() + "sweep:\n  train.lr: [1e-3, 2e-3]\ntune:\n  train.lr: {center: 3e-3}\n"),
              HasSubstr("'train.lr' is a sweep axis too"));
  EXPECT_THAT(ExpansionError(BaseSpec() +
                       "ladder:\n  rungs: [{layers: 1, d_model: 16, heads: 2}]\n  lr: [1e-3]\n"
                       "tune:\n  train.lr: {center: 3e-3}\n"),
              HasSubstr("ladder.lr sets train.lr too"));
  EXPECT_THAT(ExpansionError(BaseSpec() + "tune:\n  model.layers: {center: 3}\n"),
              HasSubstr("'model.layers' is not a real-valued key of the trial config"));
  EXPECT_THAT(ExpansionError(BaseSpec() + "tune:\n  train.lr: {grid: {ratio: 2}}\n"), HasSubstr("a search needs a centre"));
}

TEST(TuneSpec, ACentrePerRungMustCoverTheRungsThatStartOnTheirOwnAndPerMustNameTheRungForIt) {
  const std::string ladder =
      "ladder:\n  rungs: [{layers: 1, d_model: 16, heads: 2, label: small}, {layers: 2, d_model: 16, heads: 2, label: big}]\n";
  EXPECT_THAT(ExpansionError(BaseSpec() + ladder + "tune:\n  train.lr: {center: {small: 3e-3}, predict: none}\n"),
              HasSubstr("no centre for rung 'big' (with predict: none every rung starts on its own centre)"));
  EXPECT_EQ(ExpansionError(BaseSpec() + ladder + "tune:\n  train.lr: {center: {small: 3e-3}}\n"), "")
      << "with predict: power_law only the smallest rung starts on its own centre";
  EXPECT_THAT(ExpansionError(BaseSpec() + ladder + kAxes + "tune:\n  train.lr: {center: {small: 3e-3}, per: [position.variant]}\n"),
              HasSubstr("a centre per rung needs `rung` in `per`"));
  EXPECT_THAT(ExpansionError(BaseSpec() + ladder + kAxes +
                       "tune:\n  train.lr: {center: 3e-3, per: [position.variant], extrapolate_above: small}\n"),
              HasSubstr("extrapolating across rungs needs `rung` in `per`"));
  EXPECT_EQ(ExpansionError(BaseSpec() + "tune:\n  train.lr: {center: 3e-3, from_sweep: null}\n"), "")
      << "from_sweep: null is the default written out";
}

TEST(TuneSpec, ATunedSweepRefusesTwoCellsOfOneModel) {
  EXPECT_THAT(ExpansionError(BaseSpec() + "sweep:\n  inverse_temperature: [{form: none}, {form: log_power, xi: 0}]\n"
                                    "tune:\n  train.lr: {center: 3e-3}\n"),
              HasSubstr("a tuned sweep needs every cell distinct"));
}

TEST(EarlyStopSpec, RefusesBadValuesAndAshaWithoutTuning) {
  const std::string errors = ExpansionError(BaseSpec() +
                                      "early_stop:\n"
                                      "  divergence: {factor: 0.5}\n"
                                      "  asha: {reduction: 1, at: [0.5, 0.25]}\n");
  EXPECT_THAT(errors, HasSubstr("early_stop.divergence.factor: expected a number > 1"));
  EXPECT_THAT(errors, HasSubstr("early_stop.asha.reduction: expected an integer >= 2"));
  EXPECT_THAT(errors, HasSubstr("early_stop.asha.at: expected increasing fractions"));
  EXPECT_THAT(errors, HasSubstr("successive halving compares the trials of one tuning cell: it needs a `tune` block"));
}

TEST(TuneSpec, ACentrePastFloat32IsRefusedAtTheCentreNotTrainedAtADefault) {
  // 1.7e308 is a double, but neither it nor its neighbours (infinity) are numbers rung-train holds.
  const std::string errors = ExpansionError(BaseSpec() + kAxes + "tune:\n  train.lr:\n    center: 1.7e308\n");
  EXPECT_THAT(errors, HasSubstr("spec.yaml:10:5: error: tune.train.lr.center: 1.7e+308 is outside float32's range"));
  EXPECT_THAT(ExpansionError(BaseSpec() + kAxes + "tune:\n  train.lr: {center: 1e-50}\n"),
              HasSubstr("tune.train.lr.center: 1e-50 is below float32's smallest normal magnitude"));
  EXPECT_THAT(ExpansionError(BaseSpec() + kAxes + "tune:\n  train.lr: {center: {L1-d16: 1e300}}\n"),
              HasSubstr("tune.train.lr.center.L1-d16: 1e+300 is outside float32's range"));
}

TEST(TuneSpec, FirstValuesPastFloat32AreRefusedAtTheCentre) {
  // 3e38 is a float32, its neighbour above (ratio 2) is not.
  const std::string errors = ExpansionError(BaseSpec() + kAxes +
                                            "tune:\n  train.beta2: {grid: {ratio: 2, anchor: 1}, center: 3e38, "
                                            "start: 3}\n");
  EXPECT_THAT(errors, HasSubstr("tune.train.beta2.center: the search starts at 3 values around 3e+38 (ratio 2.0), and"));
  EXPECT_THAT(errors, HasSubstr("is outside float32's range"));
  EXPECT_THAT(ExpansionError(BaseSpec() + kAxes + "tune:\n  train.lr: {grid: {ratio: 2, anchor: 1e39}, center: 1e-3}\n"),
              HasSubstr("tune.train.lr.grid.anchor: 1e+39 is outside float32's range"));
}

TEST(TuneSpec, TheGridIndicesFloat32HoldsAreBoundedOnEachSide) {
  TuneSpec tune;
  tune.ratio = 1.4142135623730951;
  tune.anchor = 1.0;
  const int64_t lowest = tune.MinIndex();
  const int64_t highest = tune.MaxIndex();
  EXPECT_GE(tune.ValueAt(lowest), FLT_MIN);
  EXPECT_LT(tune.ValueAt(lowest - 1), FLT_MIN);
  EXPECT_LE(tune.ValueAt(highest), FLT_MAX);
  EXPECT_GT(tune.ValueAt(highest + 1), FLT_MAX);
  EXPECT_EQ(highest, 255);  // 2^127.5 < FLT_MAX < 2^128
  EXPECT_EQ(lowest, -252);  // FLT_MIN = 2^-126
}

}  // namespace
}  // namespace rung
