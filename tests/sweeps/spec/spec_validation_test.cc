// Bad specs: every error names file:line:col, all are reported at once.
#include <gtest/gtest.h>

#include "tests/sweeps/spec/spec_test_util.h"

namespace rung {
namespace {

using spec_testing::BaseSpec;
using spec_testing::Expand;

std::string ErrorsOf(const std::string& text) {
  StatusOr<ExpandedSweep> sweep = Expand(text);
  EXPECT_FALSE(sweep.ok());
  if (sweep.ok()) return "";
  EXPECT_EQ(sweep.status().code(), StatusCode::kInvalidArgument);
  return sweep.status().message();
}

TEST(SpecValidation, UnknownKeysGetTheNearestValidKeyAndTheirPosition) {
  std::string errors = ErrorsOf(BaseSpec() + "trian: {steps: 5}\n");
  EXPECT_NE(errors.find("spec.yaml:5:1: error: trian: unknown key (did you mean 'train'?)"), std::string::npos) << errors;
}

TEST(SpecValidation, UnknownTrialKeysInsideBlocksArePlacedToo) {
  std::string errors = ErrorsOf("name: t\n"
                                "data: {source: builtin, seq_len: 32}\n"
                                "model:\n"
                                "  layers: 1\n"
                                "  d_modle: 16\n"
                                "train: {steps: 10}\n");
  EXPECT_NE(errors.find("spec.yaml:5:3: error: model.d_modle: unknown key (did you mean 'd_model'?)"), std::string::npos)
      << errors;
}

TEST(SpecValidation, AnUnknownKeyInARungOrAnAxisValueIsPlacedAtTheKeyNotItsMapping) {
  std::string errors = ErrorsOf("name: t\n"
                                "data: {source: builtin, seq_len: 32}\n"
                                "train: {steps: 10, batch_size: 4}\n"
                                "ladder:\n"
                                "  rungs:\n"
                                "    - {layers: 1, d_model: 16, heads: 2, widht: 3}\n"
                                "    - layers: 2\n"
                                "      d_model: 16\n"
                                "      heads: 2\n"
                                "      train: {stpes: 3}\n"
                                "sweep:\n"
                                "  inverse_temperature: [{form: none, xii: 1}]\n"
                                "  zip: [{position.variant: [rope], position.bsae: [1]}]\n");
  EXPECT_NE(errors.find("spec.yaml:6:42: error: model.widht: unknown key"), std::string::npos) << errors;
  EXPECT_NE(errors.find("spec.yaml:10:15: error: train.stpes: unknown key (did you mean 'steps'?)"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("spec.yaml:12:38: error: inverse_temperature.xii: unknown key (did you mean 'xi'?)"),
            std::string::npos)
      << errors;
  // An axis key names a trial key itself: it is placed at the axis key, not at its value.
  EXPECT_NE(errors.find("spec.yaml:13:36: error: position.bsae: unknown key (did you mean 'base'?)"), std::string::npos)
      << errors;
}

TEST(SpecValidation, ReportsEveryErrorAtOnceAtTheValueThatCausedIt) {
  std::string errors = ErrorsOf(BaseSpec() +
                                "sweep:\n"
                                "  position.variant: [rope, ropee]\n"
                                "  position.fraction: [0.5, 1.5]\n"
                                "  model.layers: [-1]\n");
  // line 6 is "  position.variant: ..." (the base spec has 4 lines, then "sweep:")
  EXPECT_NE(errors.find("spec.yaml:6:28: error: position.variant: 'ropee' is not a positional variant"), std::string::npos) << errors;
  EXPECT_NE(errors.find("spec.yaml:7:28: error: position.fraction: must lie in (0, 1]"), std::string::npos) << errors;
  EXPECT_NE(errors.find("spec.yaml:8:18: error: model.layers: must be positive"), std::string::npos) << errors;
}

TEST(SpecValidation, RejectsImpossibleShapes) {
  std::string errors = ErrorsOf("name: t\n"
                                "data: {source: builtin, seq_len: 32}\n"
                                "train: {steps: 10}\n"
                                "ladder:\n"
                                "  rungs:\n"
                                "    - {layers: 1, d_model: 30, heads: 2}\n"
                                "    - {layers: 1, d_model: 32, heads: 3}\n"
                                "    - {layers: 1, d_model: 32, heads: 4, kv_heads: 3}\n");
  // head_dim is derived from the rung (its mapping); the others are placed at their own key.
  EXPECT_NE(errors.find("spec.yaml:6:7: error: model.head_dim: rotary variant 'rope' needs an even head dimension"),
            std::string::npos) << errors;
  EXPECT_NE(errors.find("spec.yaml:7:32: error: model.heads: heads x head_dim"), std::string::npos) << errors;
  EXPECT_NE(errors.find("spec.yaml:8:42: error: model.kv_heads: must divide heads"), std::string::npos) << errors;
}

TEST(SpecValidation, WrongTypesAreErrors) {
  std::string errors = ErrorsOf(BaseSpec() + "sweep:\n  train.lr: [fast]\n");
  EXPECT_NE(errors.find("spec.yaml:6:14: error: train.lr: expected a number, got the string \"fast\""), std::string::npos)
      << errors;
}

TEST(SpecValidation, ABaselineThatMatchesNoCellIsAnError) {
  std::string errors = ErrorsOf(BaseSpec() + "baseline: {position.variant: alibi}\nsweep:\n  position.variant: [rope, nope]\n");
  EXPECT_NE(errors.find("spec.yaml:5:1: error: baseline: matches no cell"), std::string::npos) << errors;
  errors = ErrorsOf(BaseSpec() + "baseline: {position.varient: rope}\n");
  EXPECT_NE(errors.find("baseline.position.varient: not a key of the trial config"), std::string::npos) << errors;
}

TEST(SpecValidation, AMetricNoTrainerReportsIsAnErrorAtItsName) {
  std::string errors = ErrorsOf(BaseSpec() + "metric: {name: val_los, goal: minimize}\n");
  EXPECT_NE(errors.find("spec.yaml:5:10: error: metric.name: 'val_los' is reported by no trainer"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("val_loss, train_loss"), std::string::npos) << errors;
  // Extrapolation summaries count once a trial asks for them.
  EXPECT_FALSE(Expand(BaseSpec() + "metric: {name: val_loss_2x_yarn, goal: minimize}\n").ok());
  StatusOr<ExpandedSweep> extrapolated = Expand(
      "name: test\n"
      "metric: {name: val_loss_2x_yarn, goal: minimize}\n"
      "data: {source: builtin, seq_len: 32}\n"
      "model: {layers: 1, d_model: 16, heads: 2}\n"
      "train: {steps: 10, batch_size: 4, extrapolation_multiples: [1, 2], extrapolation_methods: [none, yarn]}\n");
  EXPECT_TRUE(extrapolated.ok()) << extrapolated.status().ToString();
  EXPECT_TRUE(Expand(BaseSpec() + "metric: {name: train_loss, goal: minimize}\n").ok());
}

TEST(SpecValidation, LadderAndAxisShapesAreChecked) {
  std::string errors = ErrorsOf(BaseSpec() +
                                "ladder:\n"
                                "  rungs: [{layers: 1, d_model: 16, heads: 2}]\n"
                                "  lr: [0.1, 0.2]\n"
                                "sweep:\n"
                                "  seed: []\n"
                                "  zip:\n"
                                "    - {seed: [1, 2], train.lr: [0.1]}\n");
  EXPECT_NE(errors.find("ladder.lr: has 2 values for 1 rungs"), std::string::npos) << errors;
  EXPECT_NE(errors.find("sweep.seed: an axis needs a non-empty list of values"), std::string::npos) << errors;
  EXPECT_NE(errors.find("has 1 values; the zip group's first list has 2"), std::string::npos) << errors;
}

TEST(SpecValidation, YamlSyntaxErrorsNameTheirPosition) {
  StatusOr<ExpandedSweep> sweep = Expand("name: t\nsweep: {seed: [1, 2\n");
  ASSERT_FALSE(sweep.ok());
  EXPECT_NE(sweep.status().message().find("spec.yaml:"), std::string::npos) << sweep.status().message();
}

TEST(SpecValidation, StructuralAndCellErrorsAreReportedTogether) {
  std::string errors = ErrorsOf(BaseSpec() + "trian: {steps: 5}\nsweep:\n  position.variant: [ropee]\n");
  EXPECT_NE(errors.find("trian: unknown key"), std::string::npos) << errors;
  EXPECT_NE(errors.find("position.variant: 'ropee' is not a positional variant"), std::string::npos) << errors;
}

TEST(SpecValidation, ASpecNeedsAName) {
  std::string errors = ErrorsOf("data: {source: builtin}\ntrain: {steps: 1}\n");
  EXPECT_NE(errors.find("name: a spec needs a name"), std::string::npos) << errors;
}

}  // namespace
}  // namespace rung
