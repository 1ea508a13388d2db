// AdaRoPE appendix B.3's head influence (Evaluator::HeadInfluence): each query head's loss increase with
// its AdaRoPE parameters reset to their start, against losses computed by hand on the same tokens.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/data/batch_source.h"
#include "core/train/evaluation.h"

namespace rung {
namespace {

TrialConfig AdaRopeTrial() {
  TrialConfig trial;
  trial.data.seq_len = 32;
  trial.model.layers = 2;
  trial.model.d_model = 32;
  trial.model.heads = 4;
  trial.model.kv_heads = 2;  // two query heads per KV group: AdaFreq is the group's
  trial.model.position.variant = "adarope";
  trial.train.steps = 1;
  trial.train.diagnostics_sequences = 2;
  ResolveTrialConfig(&trial);
  return trial;
}

// The mean token cross-entropy on the diagnostics' sample, written out here.
double HandLoss(Transformer& model, const TokenBatch& batch) {
  torch::NoGradGuard no_grad;
  const torch::Tensor inputs = torch::tensor(batch.inputs, torch::kLong).view({2, 32});
  const torch::Tensor targets = torch::tensor(batch.targets, torch::kLong).view({-1});
  const torch::Tensor logits = model->forward(inputs);
  return torch::nn::functional::cross_entropy(logits.view({-1, logits.size(-1)}), targets).item<double>();
}

TEST(HeadInfluence, EachHeadsDeltaIsTheLossWithItsAdaRopeParametersResetAndZeroWhereNothingMoved) {
  const TrialConfig trial = AdaRopeTrial();
  ASSERT_TRUE(HasHeadInfluence(trial));
  torch::manual_seed(3);
  Transformer model(trial.model);
  model->eval();
  std::map<std::string, torch::Tensor> start;
  for (const auto& parameter : model->positional()->named_parameters()) start[parameter.key()] = parameter.value().detach().clone();
  // Training moved layer 1's first KV group's frequencies (query heads 0 and 1) and layer 0 head 3's AdaScale.
  auto parameters = model->positional()->named_parameters();
  {
    torch::NoGradGuard no_grad;
    parameters["adarope_log_freq"][1][0].add_(0.7);
    parameters["adascale_tau"][0][3].fill_(0.5);
    parameters["adascale_gamma"][0][3].fill_(0.8);
  }
  std::map<std::string, torch::Tensor> trained;
  for (const auto& parameter : parameters) trained[parameter.key()] = parameter.value().detach().clone();

  StatusOr<std::unique_ptr<BatchSource>> source = MakeBatchSource(trial.data, trial.seed);
  ASSERT_TRUE(source.ok()) << source.status().message();
  const TokenBatch batch = (*source)->Batch(Split::kValidation, 0, 2, 32);
  const double trained_loss = HandLoss(model, batch);
  auto loss_with = [&](const std::function<void()>& reset) {
    {
      torch::NoGradGuard no_grad;
      reset();
    }
    const double loss = HandLoss(model, batch);
    torch::NoGradGuard no_grad;
    for (auto& parameter : parameters) parameter.value().copy_(trained.at(parameter.key()));
    return loss;
  };
  const double frequency_reset = loss_with([&] { parameters["adarope_log_freq"][1][0].copy_(start["adarope_log_freq"][1][0]); });
  const double scale_reset = loss_with([&] {
    parameters["adascale_tau"][0][3].copy_(start["adascale_tau"][0][3]);
    parameters["adascale_gamma"][0][3].copy_(start["adascale_gamma"][0][3]);
  });
  ASSERT_GT(std::fabs(frequency_reset - trained_loss), 1e-6);
  ASSERT_GT(std::fabs(scale_reset - trained_loss), 1e-6);

  Evaluator evaluator(trial, torch::kCPU, **source, model);
  const std::optional<records::DiagnosticsRecord> record = evaluator.HeadInfluence(5, start);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->kind, "head_influence");
  const records::HeadInfluenceDiagnostics& influence = *record->head_influence;
  EXPECT_EQ(influence.frequency_unit, "kv_group");
  EXPECT_EQ(influence.scale_unit, "head");
  EXPECT_EQ(influence.sequences, 2);
  EXPECT_EQ(influence.length, 32);
  EXPECT_NEAR(influence.loss, trained_loss, 1e-5);
  ASSERT_EQ(influence.heads.size(), 8u);
  for (const records::HeadInfluence& head : influence.heads) {
    SCOPED_TRACE("layer " + std::to_string(head.layer) + " head " + std::to_string(head.head));
    ASSERT_TRUE(head.all && head.frequency && head.scale);
    const bool moved_frequency = head.layer == 1 && head.head < 2;
    const bool moved_scale = head.layer == 0 && head.head == 3;
    EXPECT_NEAR(*head.frequency, moved_frequency ? frequency_reset - trained_loss : 0.0, 1e-5);
    EXPECT_NEAR(*head.scale, moved_scale ? scale_reset - trained_loss : 0.0, 1e-5);
    EXPECT_NEAR(*head.all, moved_frequency ? *head.frequency : moved_scale ? *head.scale : 0.0, 1e-5);
    if (!moved_frequency && !moved_scale) EXPECT_EQ(*head.all, 0.0);  // the same parameters: the same loss, exactly
  }
  // The model is left as trained.
  for (const auto& parameter : model->positional()->named_parameters()) {
    EXPECT_TRUE(torch::equal(parameter.value(), trained.at(parameter.key()))) << parameter.key();
  }
}

TEST(HeadInfluence, SharedParametersAreResetAsOneUnitAndOtherVariantsHaveNone) {
  TrialConfig trial = AdaRopeTrial();
  trial.model.position.adarope.share_freq = "global";
  trial.model.position.adarope.share_scale = "layer";
  torch::manual_seed(4);
  Transformer model(trial.model);
  std::map<std::string, torch::Tensor> start;
  for (const auto& parameter : model->positional()->named_parameters()) start[parameter.key()] = parameter.value().detach().clone();
  {
    torch::NoGradGuard no_grad;
    model->positional()->named_parameters()["adarope_log_freq"].add_(0.5);
  }
  StatusOr<std::unique_ptr<BatchSource>> source = MakeBatchSource(trial.data, trial.seed);
  ASSERT_TRUE(source.ok()) << source.status().message();
  Evaluator evaluator(trial, torch::kCPU, **source, model);
  const std::optional<records::DiagnosticsRecord> record = evaluator.HeadInfluence(5, start);
  ASSERT_TRUE(record.has_value());
  const records::HeadInfluenceDiagnostics& influence = *record->head_influence;
  EXPECT_EQ(influence.frequency_unit, "model");
  EXPECT_EQ(influence.scale_unit, "layer");
  // One frequency schedule for the whole model: every head reports the same influence, not zero.
  for (const records::HeadInfluence& head : influence.heads) {
    EXPECT_DOUBLE_EQ(*head.frequency, *influence.heads.front().frequency);
    EXPECT_EQ(*head.scale, 0.0);
  }
  EXPECT_GT(std::fabs(*influence.heads.front().frequency), 1e-6);
  trial.model.position.variant = "lerope";
  EXPECT_FALSE(HasHeadInfluence(trial));
}

}  // namespace
}  // namespace rung
