// The ceilings of a trial config (core/config/config_limits.h): each refused through the ordinary
// validation, with its key path, the limit and (from a file) file:line:col; none overflows.
#include "core/config/config_limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "core/common/checked_arithmetic.h"
#include "core/config/model_arithmetic.h"
#include "core/config/trial_config.h"
#include "core/config/yaml_document.h"

namespace rung {
namespace {

using ::testing::HasSubstr;

using nlohmann::json;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

json SmallTrial() {
  return json::parse(R"({"data": {"source": "builtin", "seq_len": 64},
                         "model": {"layers": 2, "d_model": 32, "heads": 4},
                         "train": {"steps": 10, "batch_size": 4}})");
}

// The validation message of `config`, or "" when it is valid.
std::string Refusal(const json& config) {
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  return trial.ok() ? std::string() : trial.status().message();
}

TEST(ConfigLimits, TheLimitsAreWithinTheTrainersArithmetic) {
  // The largest model the shape limits allow must still have an exact parameter count.
  ModelConfig model;
  model.layers = kMaxLayers;
  model.d_model = kMaxModelWidth;
  model.heads = 1;
  model.mlp = "swiglu";
  model.mlp_hidden = kMaxMlpHidden;
  model.vocab_size = kMaxVocabSize;
  model.seq_len = kMaxSequenceLength;
  ResolveModelConfig(&model);
  EXPECT_FALSE(CountParameters(model).overflow);
}

TEST(ConfigLimits, AnOverflowingParameterCountIsFlaggedNotWrapped) {
  ModelConfig model;
  model.layers = int64_t{1} << 40;
  model.d_model = int64_t{1} << 20;
  model.heads = 1;
  model.vocab_size = 256;
  ResolveModelConfig(&model);
  const ParameterCounts counts = CountParameters(model);
  EXPECT_TRUE(counts.overflow);
  EXPECT_EQ(counts.total(), 0);
}

TEST(ConfigLimits, StepsWhoseTokensOverflowAreRefused) {
  json config = SmallTrial();
  config["train"]["steps"] = kInt64Max;
  EXPECT_THAT(Refusal(config),
              HasSubstr("train.steps: steps 9223372036854775807 x 256 tokens per step overflows int64"));
}

TEST(ConfigLimits, TokensPerStepThatOverflowAreRefused) {
  json config = SmallTrial();
  config["train"]["grad_accum"] = int64_t{1} << 60;
  EXPECT_THAT(Refusal(config),
              HasSubstr("train.grad_accum: batch_size x grad_accum x data.seq_len (tokens per step) overflows"));
}

TEST(ConfigLimits, ATrainingLengthOverTheLimitIsRefused) {
  json config = SmallTrial();
  config["data"]["seq_len"] = 1e9;
  EXPECT_THAT(Refusal(config), HasSubstr("data.seq_len: the training length must be <= 1048576"));
  config["data"]["seq_len"] = kMaxSequenceLength;
  config["train"]["batch_size"] = 1;
  // The diagnostics' three batches of 16 are more tokens than are measured at once; one batch is not.
  EXPECT_THAT(Refusal(config), HasSubstr("train.diagnostics_sequences: diagnostics_batches x diagnostics_sequences x "
                                         "data.seq_len is more than the fixed limit"));
  config["train"]["diagnostics_batches"] = 1;
  EXPECT_EQ(Refusal(config), "");
}

TEST(ConfigLimits, AnEvaluatedLengthOverTheLimitIsRefused) {
  json config = SmallTrial();
  config["train"]["extrapolation_multiples"] = {1, 100000};
  EXPECT_THAT(Refusal(config), HasSubstr("train.extrapolation_multiples: multiple 100000 x data.seq_len 64 is an "
                                         "evaluated length over the fixed limit of 1048576"));
  config["train"]["extrapolation_multiples"] = {1, kMaxSequenceLength / 64};
  EXPECT_EQ(Refusal(config), "");
  config["train"]["extrapolation_multiples"] = {kInt64Max};
  EXPECT_NE(Refusal(config).find("multiple 9223372036854775807"), std::string::npos);
}

TEST(ConfigLimits, AMicroBatchOverTheLimitIsRefusedWithTheWayToBatchMore) {
  json config = SmallTrial();
  config["train"]["batch_size"] = int64_t{1} << 20;
  EXPECT_THAT(Refusal(config),
              HasSubstr("train.batch_size: batch_size 1048576 x data.seq_len 64 is more than the fixed limit of "
                        "16777216 tokens in one micro-batch (for larger batches, raise train.grad_accum)"));
}

TEST(ConfigLimits, ModelShapesOverTheLimitsAreRefused) {
  for (const auto& [key, value] : {std::pair<std::string, int64_t>{"layers", 100000},
                                   {"d_model", int64_t{1} << 40},
                                   {"vocab_size", int64_t{1} << 30},
                                   {"mlp_hidden", int64_t{1} << 40}}) {
    json config = SmallTrial();
    config["model"][key] = value;
    if (key == "d_model") config["model"]["heads"] = 1;
    const std::string message = Refusal(config);
    EXPECT_NE(message.find("model." + key + ": " + key + " must be <= "), std::string::npos) << key << ": " << message;
  }
}

TEST(ConfigLimits, AModelOverTheParameterCeilingIsRefused) {
  json config = SmallTrial();
  config["model"] = {{"layers", 1024}, {"d_model", 16384}, {"heads", 128}};
  const std::string message = Refusal(config);
  EXPECT_THAT(message, HasSubstr("model: 3298"));
  EXPECT_THAT(message, HasSubstr("more than the fixed limit of 100000000000"));
}

TEST(ConfigLimits, SyntheticVocabulariesAndWindowsDoNotOverflow) {
  json config = SmallTrial();
  config["data"] = {
      {"source", "niah"},
      {"seq_len", 64},
      {"niah", {{"key_symbols", kInt64Max}, {"value_symbols", kInt64Max}, {"max_distractors", kInt64Max}}}};
  std::string message = Refusal(config);
  EXPECT_NE(message.find("data.niah.key_symbols: key_symbols must be <= 16777216"), std::string::npos) << message;
  config["data"] = {{"source", "nrw"}, {"seq_len", 64}, {"nrw", {{"window_centre", kInt64Max}, {"window_width", 8}}}};
  message = Refusal(config);
  EXPECT_NE(message.find("window (centre + width/2 = over int64)"), std::string::npos) << message;
}

TEST(ConfigLimits, ResourcesOverTheLimitAreRefused) {
  json config = SmallTrial();
  config["resources"] = {{"cpus", kInt64Max}};
  EXPECT_NE(Refusal(config).find("resources.cpus: cpus must be <= 4096"), std::string::npos);
}

TEST(ConfigLimits, AFileNamesWhereTheValueOverTheLimitWasWritten) {
  StatusOr<ConfigDocument> document = ParseConfigDocument(
      "data: {source: builtin, seq_len: 1e9}\nmodel: {layers: 2, d_model: 32, heads: 4}\n"
      "train: {steps: 10}\n",
      "trial.yaml");
  ASSERT_TRUE(document.ok()) << document.status().message();
  StatusOr<TrialConfig> trial =
      TrialConfigFromJson(document->json, [&](const std::string& key) { return document->Locate(key); });
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find("trial.yaml:1:25: data.seq_len: the training length must be <= 1048576"),
            std::string::npos)
      << trial.status().message();
}

TEST(CheckedArithmetic, SaysWhenAProductOrSumOverflows) {
  EXPECT_EQ(CheckedProduct({3, 4, 5}), 60);
  EXPECT_FALSE(CheckedProduct({kInt64Max, 2}).has_value());
  EXPECT_FALSE(CheckedSum({kInt64Max, 1}).has_value());
  EXPECT_EQ((CheckedInt64(6) * 7 + 1).value(), 43);
  EXPECT_FALSE((CheckedInt64(kInt64Max) * 2 + 1).value().has_value());
}

}  // namespace
}  // namespace rung
