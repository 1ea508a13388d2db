#include "sweeps/spec/expansion.h"

#include <cmath>
#include <filesystem>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sweeps/spec/spec_test_util.h"

namespace rung {
namespace {

using spec_testing::BaseSpec;
using spec_testing::Expand;
using ::testing::HasSubstr;

TEST(SweepExpansion, CrossesRungsWithEveryAxisInSpecOrder) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "ladder:\n"
                                         "  rungs: [{layers: 1, d_model: 16, heads: 2}, {layers: 2, d_model: 32, heads: 2}]\n"
                                         "sweep:\n"
                                         "  seed: [0, 1]\n"
                                         "  position.variant: [rope, lerope, nope]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 12u);
  // the last axis in the text varies fastest, rungs slowest
  EXPECT_EQ(sweep->trials[0].assignments["seed"], 0);
  EXPECT_EQ(sweep->trials[0].config.model.position.variant, "rope");
  EXPECT_EQ(sweep->trials[1].config.model.position.variant, "lerope");
  EXPECT_EQ(sweep->trials[3].assignments["seed"], 1);
  EXPECT_EQ(sweep->trials[6].config.model.d_model, 32);
  EXPECT_EQ(sweep->trials[6].rung_label, "L2-d32");
  EXPECT_EQ(sweep->trials[11].config.seed, 1u);
  std::set<std::string> identities;
  for (const ExpandedTrial& trial : sweep->trials) identities.insert(trial.identity);
  EXPECT_EQ(identities.size(), 12u);
}

// A large sweep: the trials come in cell order, and errors are reported in cell order with their
// spec locations.
TEST(SweepExpansion, ALargeSweepKeepsCellOrderAndReportsErrorsInOrder) {
  std::string seeds;
  for (int seed = 0; seed < 150; ++seed) seeds += (seed > 0 ? ", " : "") + std::to_string(seed);
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "ladder:\n"
                                         "  rungs: [{layers: 1, d_model: 16, heads: 2}, {layers: 2, d_model: 32, heads: 2}]\n"
                                         "sweep:\n"
                                         "  seed: [" + seeds + "]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 300u);
  std::set<std::string> identities;
  for (size_t index = 0; index < sweep->trials.size(); ++index) {
    const ExpandedTrial& trial = sweep->trials[index];
    EXPECT_EQ(trial.index, static_cast<int64_t>(index));
    EXPECT_EQ(trial.rung, static_cast<int64_t>(index / 150));
    EXPECT_EQ(trial.assignments["seed"], static_cast<int>(index % 150));
    EXPECT_EQ(trial.config.seed, index % 150);
    EXPECT_EQ(trial.config_json["seed"], index % 150);
    identities.insert(trial.identity);
  }
  EXPECT_EQ(identities.size(), 300u);

  // heads 3 does not divide d_model 16: every such cell fails, at the axis value's location
  StatusOr<ExpandedSweep> bad = Expand(BaseSpec() +
                                       "sweep:\n"
                                       "  seed: [" + seeds + "]\n"
                                       "  model.heads: [2, 3]\n");
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("spec.yaml:7:20: error: model"), std::string::npos) << bad.status().message();
}

TEST(SweepExpansion, MappingValuesMergeIntoTheirBlock) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "inverse_temperature: {form: log_power, n_ref: 64}\n"
                                         "sweep:\n"
                                         "  inverse_temperature: [{xi: 0.5}, {form: qwen, xi: 2}]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 2u);
  EXPECT_EQ(sweep->trials[0].config.model.inverse_temperature.form, "log_power");
  EXPECT_DOUBLE_EQ(sweep->trials[0].config.model.inverse_temperature.xi, 0.5);
  EXPECT_DOUBLE_EQ(sweep->trials[0].config.model.inverse_temperature.n_ref, 64.0);  // kept from the defaults
  EXPECT_EQ(sweep->trials[1].config.model.inverse_temperature.form, "qwen");
}

TEST(SweepExpansion, ZippedAxesStepTogether) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "sweep:\n"
                                         "  zip:\n"
                                         "    - {position.variant: [prope, prope, rope], position.fraction: [0.25, 0.5, 1.0]}\n"
                                         "  seed: [0, 1]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 6u);
  EXPECT_DOUBLE_EQ(sweep->trials[0].config.model.position.fraction, 0.25);
  EXPECT_DOUBLE_EQ(sweep->trials[2].config.model.position.fraction, 0.5);
  EXPECT_EQ(sweep->trials[4].config.model.position.variant, "rope");
}

TEST(SweepExpansion, RandomDrawsAreSeededAndInRange) {
  const std::string text = BaseSpec() +
                           "sweep:\n"
                           "  random:\n"
                           "    samples: 20\n"
                           "    seed: 7\n"
                           "    axes:\n"
                           "      train.lr: {log_uniform: [1.0e-4, 1.0e-2]}\n"
                           "      train.weight_decay: {uniform: [0.0, 0.2]}\n"
                           "      model.mlp: {choice: [gelu, swiglu]}\n";
  StatusOr<ExpandedSweep> first = Expand(text), second = Expand(text);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->trials.size(), 20u);
  std::set<std::string> mlps;
  for (size_t index = 0; index < 20; ++index) {
    const TrainConfig& train = first->trials[index].config.train;
    EXPECT_GE(train.lr, 1e-4);
    EXPECT_LE(train.lr, 1e-2);
    EXPECT_GE(train.weight_decay, 0.0);
    EXPECT_LE(train.weight_decay, 0.2);
    EXPECT_DOUBLE_EQ(train.lr, second->trials[index].config.train.lr);
    mlps.insert(first->trials[index].config.model.mlp);
  }
  EXPECT_EQ(mlps.size(), 2u);
}

TEST(SweepExpansion, LadderRulesDeriveWidthTokensAndLearningRate) {
  StatusOr<ExpandedSweep> sweep = Expand(
      "name: rules\n"
      "data: {source: builtin, seq_len: 32}\n"
      "train: {batch_size: 4}\n"
      "ladder:\n"
      "  depths: [3, 6]\n"
      "  head_dim: 8\n"
      "  heads_per_layer: 1.3333333\n"
      "  tokens_per_param: 20\n"
      "  lr: {coefficient: 1.0, exponent: -0.5}\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 2u);
  const ExpandedTrial& big = sweep->trials[1];
  EXPECT_EQ(big.config.model.heads, 8);
  EXPECT_EQ(big.config.model.d_model, 64);
  const double parameters = static_cast<double>(big.parameters.total() - big.parameters.positional);
  EXPECT_EQ(big.config.train.tokens, std::llround(20 * parameters));
  EXPECT_EQ(big.config.train.steps, (big.config.train.tokens + 127) / 128);
  EXPECT_NEAR(big.config.train.lr, 1.0 / std::sqrt(parameters), 1e-12);
  EXPECT_DOUBLE_EQ(big.flops, 6.0 * big.parameters.nonembedding() * big.tokens);
}

TEST(SweepExpansion, AnAxisOnAKeyALadderRuleSetsIsAnErrorNamingBoth) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "ladder:\n"
                                         "  rungs: [{layers: 1, d_model: 16, heads: 2}]\n"
                                         "  lr: [0.5]\n"
                                         "sweep:\n"
                                         "  train.lr: [0.001, 0.002]\n");
  ASSERT_FALSE(sweep.ok());
  EXPECT_NE(sweep.status().message().find("spec.yaml:9:3: error: sweep: the axis sweep.train.lr and the ladder rule "
                                          "ladder.lr (spec.yaml:7:3) both set train.lr"),
            std::string::npos)
      << sweep.status().message();
}

TEST(SweepExpansion, AnAxisMaySetAKeyOfAnExplicitRung) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "ladder:\n"
                                         "  rungs: [{layers: 1, d_model: 16, heads: 2, train: {lr: 0.5}}]\n"
                                         "sweep:\n"
                                         "  train.lr: [0.001, 0.002]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  EXPECT_DOUBLE_EQ(sweep->trials[0].config.train.lr, 0.001);
  EXPECT_DOUBLE_EQ(sweep->trials[1].config.train.lr, 0.002);
}

TEST(SweepExpansion, ALabelNamesCellsWithoutSettingAConfigKeyOrChangingTheIdentity) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "sweep:\n"
                                         "  zip:\n"
                                         "    - {label: [\"short base\", long base], position.base: [500, 10000]}\n"
                                         "  seed: [0, 1]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 4u);
  EXPECT_EQ(sweep->trials[0].assignments["label"], "short base");
  EXPECT_EQ(sweep->trials[3].assignments["label"], "long base");
  EXPECT_DOUBLE_EQ(sweep->trials[3].config.model.position.base, 10000.0);
  EXPECT_FALSE(sweep->trials[0].config_json.contains("label"));
  StatusOr<ExpandedSweep> unlabelled = Expand(BaseSpec() +
                                              "sweep:\n"
                                              "  position.base: [500, 10000]\n"
                                              "  seed: [0, 1]\n");
  ASSERT_TRUE(unlabelled.ok()) << unlabelled.status().message();
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(sweep->trials[i].identity, unlabelled->trials[i].identity) << i;

  // A label is a non-empty string, refused where it is written; a baseline cannot select by it.
  StatusOr<ExpandedSweep> numbered = Expand(BaseSpec() + "sweep:\n  label: [a, 3]\n");
  ASSERT_FALSE(numbered.ok());
  EXPECT_THAT(numbered.status().message(), HasSubstr("spec.yaml:"));
  EXPECT_THAT(numbered.status().message(), HasSubstr("a label names the cell's arm: a non-empty string, got 3"));
  StatusOr<ExpandedSweep> selected =
      Expand(BaseSpec() + "baseline: {label: a}\nsweep:\n  label: [a, b]\n  position.base: [500, 10000]\n");
  ASSERT_FALSE(selected.ok());
  EXPECT_THAT(selected.status().message(), HasSubstr("rung results --against label=NAME"));
  // Two labels on one model would be one trial: refused, naming both cells.
  StatusOr<ExpandedSweep> twice = Expand(BaseSpec() + "sweep:\n  label: [a, b]\n");
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("are the same model under two labels"));
}

TEST(SweepExpansion, MarksTheBaselineCells) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "baseline: {position.variant: rope}\n"
                                         "sweep:\n"
                                         "  position.variant: [rope, lerope]\n"
                                         "  seed: [0, 1]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  int baseline = 0;
  for (const ExpandedTrial& trial : sweep->trials) baseline += trial.baseline ? 1 : 0;
  EXPECT_EQ(baseline, 2);
  EXPECT_TRUE(sweep->trials[0].baseline);
}

TEST(SweepExpansion, WarnsAboutTwoCellsWithTheSameEffectiveModel) {
  StatusOr<ExpandedSweep> sweep = Expand(BaseSpec() +
                                         "sweep:\n"
                                         "  inverse_temperature: [{form: none}, {form: log_power, xi: 0.0}]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->warnings.size(), 1u);
  EXPECT_NE(sweep->warnings[0].message.find("same model"), std::string::npos);
  EXPECT_EQ(sweep->warnings[0].location.rfind("spec.yaml:", 0), 0u);
}

TEST(SweepExpansion, EveryExampleSpecExpands) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RUNG_SOURCE_DIR) + "/sweeps/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    StatusOr<ExpandedSweep> sweep = LoadSweepSpec(entry.path().string());
    ASSERT_TRUE(sweep.ok()) << entry.path() << ": " << sweep.status().message();
    EXPECT_GT(sweep->trials.size(), 0u) << entry.path();
    EXPECT_TRUE(sweep->warnings.empty()) << entry.path() << ": " << sweep->warnings[0].ToString();
    bool any_baseline = false;
    for (const ExpandedTrial& trial : sweep->trials) any_baseline |= trial.baseline;
    EXPECT_TRUE(any_baseline) << entry.path();
  }
  EXPECT_GE(count, 6);
}

TEST(SweepExpansion, CpuLadderSpansOneAndAHalfDecadesOfCompute) {
  StatusOr<ExpandedSweep> sweep = LoadSweepSpec(std::string(RUNG_SOURCE_DIR) + "/sweeps/examples/cpu-ladder.yaml");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  double smallest = 1e300, largest = 0;
  std::set<std::string> variants;
  for (const ExpandedTrial& trial : sweep->trials) {
    smallest = std::min(smallest, trial.flops);
    largest = std::max(largest, trial.flops);
    variants.insert(trial.config.model.position.variant);
  }
  EXPECT_GE(std::log10(largest / smallest), 1.5);
  EXPECT_EQ(variants.size(), 6u);
  EXPECT_GE(sweep->spec.ladder.rungs.size(), 4u);
}

// Found by the sweep_spec fuzzer: each aborted rung validate and the coordinator's SubmitSweep (text that is
// not UTF-8 is now refused as the document is read, core/config/yaml_document.cc).
TEST(SweepExpansion, ALadderListShorterThanTheRungsIsAnErrorNotACrash) {
  StatusOr<ExpandedSweep> sweep = ExpandSweepSpecText(
      "ladder:\n  rungs:\n  - {}\n  - {}\n  tokens_per_param: 2\n  lr: [3]\n", "short.yaml");
  ASSERT_FALSE(sweep.ok());
  EXPECT_EQ(sweep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(sweep.status().message(), ::testing::HasSubstr("has 1 values for 2 rungs"));
}

// Found by the sweep_spec fuzzer (fuzz/regressions/sweep_spec/ladder-heads-per-layer-*): a ratio of
// another type was converted to a number, which threw, and aborted rung validate and SubmitSweep.
TEST(SweepExpansion, ALadderHeadRatioThatIsNotANumberIsAnErrorAtItNotACrash) {
  for (const std::string& ratio : {"abc", "!", "[2]", "{a: 1}", "true"}) {
    StatusOr<ExpandedSweep> sweep = ExpandSweepSpecText(
        "ladder:\n  depths: [1, 2]\n  head_dim: 16\n  heads_per_layer: " + ratio + "\n  tokens_per_param: 20\n",
        "ratio.yaml");
    ASSERT_FALSE(sweep.ok()) << ratio;
    EXPECT_EQ(sweep.status().code(), StatusCode::kInvalidArgument) << ratio;
    EXPECT_THAT(sweep.status().message(),
                ::testing::HasSubstr("ratio.yaml:4:3: error: ladder.heads_per_layer: must be a positive number"))
        << ratio;
  }
}

TEST(SweepExpansion, ValuesThatAreNotUtf8AreRefusedWhereTheyAreNotThrown) {
  for (const std::string& spec : {std::string("baseline: {position: \xff}\ntrain:\n  tokens: 3\n"),
                                  std::string("ladder:\n  rungs:\n  - {model: {layers: \"\xff\"}}\n")}) {
    StatusOr<ExpandedSweep> sweep = ExpandSweepSpecText(spec, "bytes.yaml");
    EXPECT_FALSE(sweep.ok()) << spec;
    EXPECT_EQ(sweep.status().code(), StatusCode::kInvalidArgument) << sweep.status().ToString();
    EXPECT_THAT(sweep.status().message(), ::testing::HasSubstr("bytes.yaml:"));
    EXPECT_THAT(sweep.status().message(), ::testing::HasSubstr("not UTF-8 text"));
  }
}

}  // namespace
}  // namespace rung

namespace rung {
namespace {

// An evaluation of a Hugging Face folder with train.init.model: checkpoint takes the folder's model
// block (tests/cli/fixture/hf-tiny: Llama, 1 layer, d_model 8, 2 heads sharing 1 KV head, vocabulary 40).
TEST(SweepExpansion, AModelTakenFromAHuggingFaceFolderIsTheFoldersConfig) {
  const std::string folder = std::string(RUNG_SOURCE_DIR) + "/tests/cli/fixture/hf-tiny";
  const std::string spec =
      "name: hf-eval\n"
      "data: {source: shards, path: tokens.bin, vocab_size: 40, seq_len: 8}\n"
      "model: {layers: 1}\n"  // agrees with the folder: allowed
      "train: {steps: 0, batch_size: 4, init: {checkpoint: " + folder + ", model: checkpoint}}\n"
      "sweep:\n"
      "  train.extrapolation_yarn_c: [0.1, 0.2]\n";
  StatusOr<ExpandedSweep> sweep = spec_testing::Expand(spec);
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 2u);
  const ModelConfig& model = sweep->trials[0].config.model;
  EXPECT_EQ(model.layers, 1);
  EXPECT_EQ(model.d_model, 8);
  EXPECT_EQ(model.heads, 2);
  EXPECT_EQ(model.kv_heads, 1);
  EXPECT_EQ(model.head_dim, 4);
  EXPECT_EQ(model.mlp, "swiglu");
  EXPECT_EQ(model.mlp_hidden, 8);
  EXPECT_EQ(model.vocab_size, 40);
  EXPECT_FALSE(model.tie_embeddings);
  EXPECT_EQ(model.position.variant, "rope");
  EXPECT_DOUBLE_EQ(model.position.base, 10000.0);
  EXPECT_EQ(sweep->trials[0].config_json["model"]["layers"], 1);

  // A folder without config.json is refused where the checkpoint is named.
  StatusOr<ExpandedSweep> missing = spec_testing::Expand(
      "name: hf-eval\n"
      "data: {source: shards, path: tokens.bin, vocab_size: 40, seq_len: 8}\n"
      "train: {steps: 0, init: {checkpoint: /nonexistent/folder, model: checkpoint}}\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("train.init.checkpoint"));
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("/nonexistent/folder"));
}

// A model key the spec writes must agree with the folder it takes the model from.
TEST(SweepExpansion, AModelKeyThatContradictsTheFolderIsRefusedWhereItIsWritten) {
  const std::string folder = std::string(RUNG_SOURCE_DIR) + "/tests/cli/fixture/hf-tiny";
  StatusOr<ExpandedSweep> sweep = spec_testing::Expand(
      "name: hf-eval\n"
      "data: {source: shards, path: tokens.bin, vocab_size: 40, seq_len: 8}\n"
      "model: {layers: 3, d_model: 8}\n"
      "train: {steps: 0, init: {checkpoint: " + folder + ", model: checkpoint}}\n");
  ASSERT_FALSE(sweep.ok());
  EXPECT_THAT(sweep.status().message(), ::testing::HasSubstr("spec.yaml:3:"));
  EXPECT_THAT(sweep.status().message(), ::testing::HasSubstr("model.layers: 3 here"));
  EXPECT_THAT(sweep.status().message(), ::testing::Not(::testing::HasSubstr("model.d_model")));  // 8 agrees
}

// A variant that starts as RoPE replaces the RoPE folder's own (a variant changed at initialisation);
// one that does not is a contradiction.
TEST(SweepExpansion, AModelTakenFromARopeFolderMayStartAsAnotherVariant) {
  const std::string folder = std::string(RUNG_SOURCE_DIR) + "/tests/cli/fixture/hf-tiny";
  const std::string head =
      "name: hf-convert\n"
      "data: {source: shards, path: tokens.bin, vocab_size: 40, seq_len: 8}\n"
      "train: {steps: 0, init: {checkpoint: " + folder + ", model: checkpoint}}\n";
  StatusOr<ExpandedSweep> sweep = spec_testing::Expand(head + "sweep:\n  position.variant: [rope, lerope, adarope]\n");
  ASSERT_TRUE(sweep.ok()) << sweep.status().message();
  ASSERT_EQ(sweep->trials.size(), 3u);
  EXPECT_EQ(sweep->trials[1].config.model.position.variant, "lerope");
  EXPECT_EQ(sweep->trials[2].config.model.position.variant, "adarope");
  EXPECT_EQ(sweep->trials[2].config.model.d_model, 8);  // the folder's backbone
  StatusOr<ExpandedSweep> nope = spec_testing::Expand(head + "position: {variant: nope}\n");
  ASSERT_FALSE(nope.ok());
  EXPECT_THAT(nope.status().message(), ::testing::HasSubstr("position.variant: \"nope\" here"));
}

// train.init.model: checkpoint without a folder to read says what to give.
TEST(SweepExpansion, AModelTakenFromACheckpointNeedsTheFolder) {
  StatusOr<ExpandedSweep> sweep = spec_testing::Expand(
      "name: test\n"
      "data: {source: builtin, seq_len: 32}\n"
      "train: {steps: 0, init: {from_trial: a/1, model: checkpoint}}\n");
  ASSERT_FALSE(sweep.ok());
  EXPECT_THAT(sweep.status().message(), ::testing::HasSubstr("train.init.model"));
}

}  // namespace
}  // namespace rung
