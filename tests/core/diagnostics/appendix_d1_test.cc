// Paper 003's appendix D.1 measurement (core/diagnostics/appendix_d1.h) against an independent Python
// implementation of the procedure (tests/hf/appendix_d1_reference.py, Debian's python3-torch): the
// scores S(m) of a query against each key repeated M times, and every failure-mode statistic, on random
// Hugging Face-format checkpoints of each architecture (a layer past the first, so that earlier layers
// shape the keys) and on a model rung-train trained, exported as a folder for the reference to read.
#include "core/diagnostics/appendix_d1.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"
#include "core/diagnostics/failure_modes.h"
#include "core/hf/hf_export.h"
#include "core/hf/hf_import.h"
#include "core/train/checkpoint_io.h"
#include "tests/core/hf/python_reference_fixture.h"

namespace rung {
namespace {

namespace fs = std::filesystem;

class AppendixD1Test : public PythonReferenceTest {
 protected:
  nlohmann::json Reference(const std::string& model, const AppendixD1Options& options) {
    std::string keys;
    for (int64_t key : options.key_tokens) keys += (keys.empty() ? "" : ",") + std::to_string(key);
    const std::string out = (folder_ / "reference.json").string();
    RunPython("appendix_d1_reference.py",
              "--model " + model + " --layer " + std::to_string(options.layer) + " --head " +
                  std::to_string(options.head) + " --query " + std::to_string(options.query_token) + " --keys " + keys +
                  " --length " + std::to_string(options.length) +
                  (options.bos_token >= 0 ? " --bos " + std::to_string(options.bos_token) : ""),
              out);
    std::string text;
    EXPECT_TRUE(ReadFileBytes(out, "reference", &text).ok());
    return nlohmann::json::parse(text);
  }

  // rung's measurement of `model` agrees with the reference's of the folder `reference_model`.
  void ExpectAgreement(Transformer& model, const std::string& reference_model, const AppendixD1Options& options) {
    StatusOr<AppendixD1Scores> scores = MeasureAppendixD1Scores(model, options);
    ASSERT_TRUE(scores.ok()) << scores.status().message();
    const nlohmann::json reference = Reference(reference_model, options);
    ASSERT_EQ(scores->keys.size(), options.key_tokens.size());
    for (size_t key = 0; key < scores->keys.size(); ++key) {
      const std::vector<double> theirs = reference["scores"][key].get<std::vector<double>>();
      ASSERT_EQ(scores->keys[key].scores.size(), theirs.size());
      double largest = 0, difference = 0;
      for (size_t m = 0; m < theirs.size(); ++m) {
        largest = std::max(largest, std::fabs(theirs[m]));
        difference = std::max(difference, std::fabs(theirs[m] - scores->keys[key].scores[m]));
      }
      EXPECT_LE(difference, 1e-4 * std::max(1.0, largest)) << "key " << key;
      EXPECT_NEAR(scores->keys[key].amplitude_sum, reference["amplitude_sums"][key].get<double>(),
                  1e-4 * std::max(1.0, scores->keys[key].amplitude_sum));
    }
    const AppendixD1FailureModes modes =
        MeasureAppendixD1FailureModes(*scores, {Precision::kBf16, Precision::kFp16, Precision::kFp32});
    // Scores that agree to float rounding may still fall on either side of a comparison: a pair or two.
    const double pairs = static_cast<double>(options.length) * static_cast<double>(options.length) / 4;
    EXPECT_NEAR(modes.position_inversion, reference["position_inversion"].get<double>(), 3.0 / pairs);
    if (!reference["token_inversion"].is_null()) {
      EXPECT_NEAR(modes.token_inversion, reference["token_inversion"].get<double>(), 3.0 / options.length);
    }
    for (size_t p = 0; p < modes.precisions.size(); ++p) {
      const AppendixD1Precision& ours = modes.precisions[p];
      const nlohmann::json& theirs = reference["precisions"][p];
      ASSERT_EQ(theirs["precision"], PrecisionName(ours.precision));
      auto near = [](int64_t a, int64_t b) { return std::llabs(a - b) <= std::max<int64_t>(3, std::llabs(b) / 100); };
      for (size_t key = 0; key < ours.aliasing_pairs.size(); ++key) {
        EXPECT_NEAR(ours.epsilons[key], theirs["epsilons"][key].get<double>(), 1e-4 * ours.epsilons[key]);
        EXPECT_PRED2(near, ours.aliasing_pairs[key], theirs["aliasing_pairs"][key].get<int64_t>())
            << theirs["precision"] << " key " << key;
      }
      EXPECT_NEAR(ours.position_aliasing.fraction, theirs["with_pair"].get<double>(), 3.0 / options.length);
      if (theirs.contains("invariance_pairs")) {
        EXPECT_PRED2(near, ours.attention_invariance.pairs, theirs["invariance_pairs"].get<int64_t>());
        EXPECT_PRED2(near, ours.token_aliasing, theirs["token_aliasing"].get<int64_t>());
      }
    }
  }
};

TEST_F(AppendixD1Test, EveryArchitectureAgreesWithTheIndependentProcedure) {
  for (const std::string arch : {"llama", "qwen2", "qwen3", "mistral"}) {
    const std::string model = (folder_ / arch).string();
    RunPython("hf_reference.py", "make --arch " + arch + " --out " + model + " --layers 2 --dtype f32 --seed 3");
    StatusOr<hf::ImportedModel> imported = hf::ImportHfModel(model);
    ASSERT_TRUE(imported.ok()) << imported.status().message();
    AppendixD1Options options;
    options.layer = 1;
    options.head = 3;
    options.query_token = 5;
    options.key_tokens = {7, 9, 11};
    options.length = 200;
    ExpectAgreement(imported->model, model, options);
    // With a <bos> first, in layer 0: one pair rotated (the layer-0 case the paper studies).
    options.layer = 0;
    options.bos_token = 1;
    options.key_tokens = {13, 17};
    ExpectAgreement(imported->model, model, options);
  }
}

TEST_F(AppendixD1Test, AYarnFolderCountsItsAttentionScalingAsTransformersDoes) {
  // YaRN at factor 4 over 32 positions: transformers scales cos and sin by its attention factor, so the
  // product the paper reads carries its square.
  const std::string model = (folder_ / "yarn").string();
  RunPython("hf_reference.py", "make --arch llama --out " + model + " --layers 2 --dtype f32 --seed 5 --max-pos 32 "
                               "--rope-scaling '{\"rope_type\": \"yarn\", \"factor\": 4.0}'");
  StatusOr<hf::ImportedModel> imported = hf::ImportHfModel(model);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  AppendixD1Options options;
  options.layer = 1;
  options.head = 1;
  options.query_token = 5;
  options.key_tokens = {7, 9};
  options.length = 120;
  imported->model->positional()->set_length_extension(hf::ConfiguredExtension(imported->hf, options.length + 1));
  ExpectAgreement(imported->model, model, options);
}

TEST_F(AppendixD1Test, ARungTrainedModelAgreesWithTheProcedureOnItsExport) {
  const nlohmann::json trial = {
      {"seed", 2},
      {"data", {{"source", "builtin"}, {"seq_len", 64}}},
      {"model", {{"layers", 2}, {"d_model", 32}, {"heads", 4}, {"kv_heads", 2}, {"mlp", "swiglu"}}},
      {"position", {{"variant", "rope"}, {"base", 1000}}},
      {"train", {{"steps", 30}, {"batch_size", 8}, {"lr", 3e-3}, {"eval_every", 30}, {"eval_batches", 1},
                 {"log_every", 10}, {"diagnostics_sequences", 0}}},
      {"resources", {{"cpus", 1}}}};
  ASSERT_NO_FATAL_FAILURE(TrainCheckpoints(trial));
  const std::string checkpoints = Checkpoints();
  StatusOr<CheckpointModel> loaded = LoadCheckpointModel(checkpoints);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const std::string exported = (folder_ / "exported").string();
  ASSERT_TRUE(hf::ExportHfModel(loaded->model, exported).ok());
  AppendixD1Options options;
  options.layer = 1;
  options.head = 2;
  options.query_token = 'p';
  options.key_tokens = {'c', 'd', 'n'};
  options.length = 256;
  ExpectAgreement(loaded->model, exported, options);
}

TEST_F(AppendixD1Test, TheGaussianReferenceAliasesAtTable4sOrderNotFarBelowIt) {
  // M = 1024, B = 1e4, d = 128, bf16: Table 4 gives 0.057 of the pairs of distances (unit amplitudes);
  // Gaussian vectors (E a_n = pi/2, E a_n^2 = 4) give about erf(epsilon / (2 sigma)) = 0.045 by C.2's normal
  // model. Equality of rounded scores found about 0.0012 (docs/science.md section 12).
  const AppendixD1Means reference =
      GaussianAppendixD1Reference(RopeFrequencySchedule(1e4, 128), 1024, 8, 0, {Precision::kBf16, Precision::kFp16});
  const double pairs = 1024.0 * 1023.0 / 2.0;
  EXPECT_GT(reference.precisions[0].aliasing_pairs / pairs, 0.057 / 2.5);
  EXPECT_LT(reference.precisions[0].aliasing_pairs / pairs, 0.057 * 2.5);
  // fp16 resolves 8 times finer: about 8 times fewer pairs.
  EXPECT_GT(reference.precisions[0].aliasing_pairs / reference.precisions[1].aliasing_pairs, 5.0);
  EXPECT_LT(reference.precisions[0].aliasing_pairs / reference.precisions[1].aliasing_pairs, 12.0);
  // The first key is the one the query prefers at m = 1: its far half outscores its near half less often than not.
  EXPECT_LT(reference.position_inversion, 0.5);
  EXPECT_GT(reference.position_inversion, 0.2);
}

TEST_F(AppendixD1Test, RefusesWhatItCannotMeasure) {
  ModelConfig config;
  config.vocab_size = 32;
  config.layers = 1;
  config.d_model = 16;
  config.heads = 2;
  config.seq_len = 16;
  ResolveModelConfig(&config);
  Transformer model(config);
  AppendixD1Options options;
  options.key_tokens = {1};
  options.length = 8;
  options.layer = 1;
  EXPECT_NE(MeasureAppendixD1Scores(model, options).status().message().find("layer 1 is not one of the model's 1"),
            std::string::npos);
  options.layer = 0;
  options.query_token = 40;
  EXPECT_NE(MeasureAppendixD1Scores(model, options).status().message().find("token id 40 is outside the vocabulary"),
            std::string::npos);
  options.query_token = 2;
  options.key_tokens = {};
  EXPECT_NE(MeasureAppendixD1Scores(model, options).status().message().find("give 1 to 3 key tokens"), std::string::npos);
  config.position.variant = "nope";
  Transformer nope(config);
  options.key_tokens = {1};
  EXPECT_NE(MeasureAppendixD1Scores(nope, options).status().message().find("does not rotate"), std::string::npos);
}

}  // namespace
}  // namespace rung
