#include "sweeps/spec/trial_work.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"

namespace rung {
namespace {

// One layer, d_model 32, two heads of 16, GELU MLP (4 d), byte vocabulary 256, T = 16, batch 4.
TrialConfig SmallTrial() {
  const nlohmann::json json = {
      {"data", {{"source", "builtin"}, {"seq_len", 16}}},
      {"model", {{"layers", 1}, {"d_model", 32}, {"heads", 2}, {"mlp", "gelu"}}},
      {"position", {{"variant", "rope"}}},
      {"train",
       {{"steps", 10}, {"batch_size", 4}, {"eval_every", 4}, {"eval_batches", 2},
        {"extrapolation_multiples", {2}}, {"extrapolation_methods", {"none", "yarn"}},
        {"diagnostics_sequences", 3}, {"diagnostics_batches", 2}, {"diagnostics_at", {0.5, 1.0}}}}};
  StatusOr<TrialConfig> config = TrialConfigFromJson(json);
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config.value();
}

TEST(TrialWork, CountsTrainingEvaluationExtensionAndDiagnosticsAsComputedByHand) {
  // By hand: attention matrices 4 d^2 = 4096, MLP 2 x d x 4d = 8192, output head 256 x 32 = 8192, so
  // 6 N_matrix = 6 x 20480 = 122880 per token; attention 6 x layers x T x heads x head_dim
  // = 6 x 1 x 16 x 2 x 16 = 3072 per token. A training token costs 125952 FLOPs, a forward one a third.
  const double train_token = 6.0 * (4096 + 8192 + 8192) + 6.0 * 1 * 16 * 2 * 16;
  ASSERT_EQ(train_token, 125952.0);
  const TrialWork work = CountTrialWork(SmallTrial());
  // 10 steps x 4 sequences x 16 tokens.
  EXPECT_DOUBLE_EQ(work.training, 125952.0 * 10 * 4 * 16);
  // Evaluations at steps 4 and 8 and at the end: 3 x 2 batches x 4 x 16 tokens, forward.
  EXPECT_DOUBLE_EQ(work.evaluation, 3.0 * 2 * 4 * 16 * (125952.0 / 3));
  // At 2 T for none and yarn: 2 batches x 2 sequences x 32 tokens, attention per token doubled.
  EXPECT_DOUBLE_EQ(work.extension, 2 * (2.0 * 2 * 32 * (6.0 * 20480 / 3 + 2 * 3072.0 / 3)));
  // Two milestones of 2 batches of 3 sequences x 16 tokens, forward; at the end the band ablations of
  // RoPE's 8 pairs (each zeroed and reverted) and the trained loss, 17 passes of 3 sequences.
  EXPECT_DOUBLE_EQ(work.diagnostics, 2.0 * 2 * 3 * 16 * (125952.0 / 3) + 17.0 * 3 * 16 * (125952.0 / 3));
  EXPECT_DOUBLE_EQ(work.total(), work.training + work.evaluation + work.extension + work.diagnostics);
  // AdaRoPE: each pair zeroed and reverted (17 passes), and the head influence, 1 + 3 per head (2 heads).
  TrialConfig adarope = SmallTrial();
  adarope.model.position.variant = "adarope";
  EXPECT_DOUBLE_EQ(CountTrialWork(adarope).diagnostics,
                   2.0 * 2 * 3 * 16 * (125952.0 / 3) + (17.0 + 7.0) * 3 * 16 * (125952.0 / 3));
}

TEST(TrialWork, AFrozenOrAdaptedBackboneSkipsTheWeightGradientsThirdOfTheMatrixProducts) {
  // Matrix 122880 per token less its weight-gradient third, attention 3072 whole.
  const double per_token = 122880.0 * 2 / 3 + 3072.0;
  TrialConfig frozen = SmallTrial();
  frozen.train.freeze_backbone = true;
  EXPECT_DOUBLE_EQ(CountTrialWork(frozen).training, per_token * 10 * 4 * 16);
  TrialConfig adapted = SmallTrial();
  adapted.train.lora.rank = 4;
  EXPECT_DOUBLE_EQ(CountTrialWork(adapted).training, per_token * 10 * 4 * 16);
  EXPECT_DOUBLE_EQ(CountTrialWork(adapted).evaluation, CountTrialWork(SmallTrial()).evaluation);
  // What a calibration multiplies a measured tokens/s by.
  EXPECT_DOUBLE_EQ(TrainingFlopsPerToken(adapted), per_token);
  EXPECT_DOUBLE_EQ(TrainingFlopsPerToken(SmallTrial()), 125952.0);
}

TEST(TrialWork, AProbeCountsItsPromptsForwardAtEachLengthAndMethod) {
  TrialConfig config = SmallTrial();
  config.train.probe.kind = "passkey";
  config.train.probe.lengths = {16, 64};
  config.train.probe.depths = {0.0, 1.0};
  config.train.probe.instances = 3;
  const TrialWork work = CountTrialWork(config);
  // 16 tokens: none only; 64 tokens (4 T): none and yarn, attention per token 4 times T's.
  const double forward_matrix = 6.0 * 20480 / 3, forward_attention = 3072.0 / 3;
  const double at_16 = 2.0 * 3 * 16 * (forward_matrix + forward_attention);
  const double at_64 = 2.0 * 3 * 64 * (forward_matrix + 4 * forward_attention);
  EXPECT_DOUBLE_EQ(work.probe, at_16 + 2 * at_64);
  EXPECT_DOUBLE_EQ(work.total(), work.training + work.evaluation + work.extension + work.diagnostics + work.probe);
}

TEST(TrialWork, EvaluatesOnlyAtTheEndWithoutEvalEvery) {
  TrialConfig config = SmallTrial();
  config.train.eval_every = 0;
  config.train.extrapolation_multiples.clear();
  config.train.diagnostics_sequences = 0;
  const TrialWork work = CountTrialWork(config);
  EXPECT_DOUBLE_EQ(work.evaluation, 1.0 * 2 * 4 * 16 * (125952.0 / 3));
  EXPECT_EQ(work.extension, 0.0);
  EXPECT_EQ(work.diagnostics, 0.0);
}

}  // namespace
}  // namespace rung
