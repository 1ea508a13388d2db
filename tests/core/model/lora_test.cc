// Low-rank adapters (core/model/lora.h) against a dense reference: the adapted model computes what the
// model with W + (alpha / rank) B A in each target's rows computes (the rows placed here from the
// fused layouts, independently of LoraTargetSlice), MergeInto writes those weights, the trial's
// optimizer trains only the adapters and the positional parameters, and each adapter's gradient is the
// chain rule's from the dense weight's.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/config/trial_config.h"
#include "core/model/lora.h"
#include "core/model/transformer.h"
#include "core/train/step_loop.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

// Llama's shape: SwiGLU, grouped-query attention, a q/k/v bias (Qwen2's), AdaRoPE's positional parameters.
ModelConfig LlamaLike() {
  ModelConfig config = testing_models::Tiny("adarope", /*heads=*/4, /*kv_heads=*/2);
  config.mlp = "swiglu";
  config.mlp_hidden = 48;
  config.qkv_bias = true;
  ResolveModelConfig(&config);
  return config;
}

LoraConfig EveryTarget(int64_t rank = 3) {
  LoraConfig lora;
  lora.rank = rank;
  lora.alpha = 6.0;
  lora.targets = LoraTargetNames();
  return lora;
}

// Rows [first, first + count) of the named weight, for each target, by the fused layouts as the
// transformer documents them: qkv = [q; k; v], SwiGLU's mlp_up = [gate; up].
struct Rows {
  std::string weight;
  int64_t first, count;
};
Rows TargetRows(const ModelConfig& c, const std::string& target) {
  const int64_t q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  const bool swiglu = c.mlp == "swiglu";
  const std::map<std::string, Rows> rows = {
      {"q", {"qkv", 0, q}},
      {"k", {"qkv", q, kv}},
      {"v", {"qkv", q + kv, kv}},
      {"o", {"attn_out", 0, c.d_model}},
      {"gate", {"mlp_up", 0, c.mlp_hidden}},
      {"up", {"mlp_up", swiglu ? c.mlp_hidden : 0, c.mlp_hidden}},
      {"down", {"mlp_down", 0, c.d_model}}};
  return rows.at(target);
}

// Every adapter's B drawn (it starts at zero), so that the adapters change the function.
void DrawB(Transformer& model) {
  torch::NoGradGuard no_grad;
  for (auto& item : model->named_parameters(true)) {
    const std::string& name = item.key();
    if (name.rfind("lora.", 0) == 0 && name.size() > 2 && name.substr(name.size() - 2) == "_b") {
      item.value().copy_(torch::randn(item.value().sizes()) * 0.3);
    }
  }
}

// A model without adapters whose weights are `adapted`'s with every adapter's update added, placed by
// TargetRows.
Transformer DenseReference(Transformer& adapted, const LoraConfig& lora) {
  const ModelConfig& config = adapted->config();
  Transformer dense(config);
  torch::NoGradGuard no_grad;
  auto source = adapted->named_parameters(true);
  for (auto& item : dense->named_parameters(true)) item.value().copy_(source[item.key()]);
  auto params = dense->named_parameters(true);
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    for (const std::string& target : lora.targets) {
      const std::string prefix = "lora.blocks_" + std::to_string(layer) + "_" + target;
      const Rows rows = TargetRows(config, target);
      params["blocks_" + std::to_string(layer) + "_" + rows.weight].narrow(0, rows.first, rows.count) +=
          lora.alpha / static_cast<double>(lora.rank) * torch::mm(source[prefix + "_b"], source[prefix + "_a"]);
    }
  }
  return dense;
}

torch::Tensor Tokens(const ModelConfig& config) {
  torch::manual_seed(11);
  return torch::randint(0, config.vocab_size, {2, config.seq_len}, torch::kLong);
}

TEST(LoraTest, AdaptersStartAtZeroSoTheModelComputesWhatItDidBefore) {
  torch::manual_seed(1);
  Transformer model(LlamaLike());
  model->eval();
  const torch::Tensor tokens = Tokens(model->config());
  const torch::Tensor before = model->forward(tokens).detach();
  model->AddLora(EveryTarget());
  EXPECT_TRUE(torch::equal(model->forward(tokens), before));
}

TEST(LoraTest, AdaptedModelComputesTheDenseModelWithTheUpdateInEachTargetsRows) {
  for (const std::string& mlp : {"swiglu", "gelu"}) {
    torch::manual_seed(2);
    ModelConfig config = LlamaLike();
    config.mlp = mlp;
    LoraConfig lora = EveryTarget();
    if (mlp == "gelu") lora.targets = {"q", "k", "v", "o", "up", "down"};
    Transformer model(config);
    model->eval();
    const torch::Tensor tokens = Tokens(config);
    const torch::Tensor base = model->forward(tokens).detach();
    model->AddLora(lora);
    DrawB(model);
    model->eval();
    Transformer dense = DenseReference(model, lora);
    dense->eval();
    const torch::Tensor adapted = model->forward(tokens);
    const torch::Tensor reference = dense->forward(tokens);
    EXPECT_GT((adapted - base).abs().max().item<double>(), 1e-2) << "the drawn adapters change nothing";
    EXPECT_LT((adapted - reference).abs().max().item<double>(), 1e-4) << mlp;
    // MergeInto writes the same weights.
    Transformer merged(config);
    {
      torch::NoGradGuard no_grad;
      auto source = model->named_parameters(true);
      for (auto& item : merged->named_parameters(true)) item.value().copy_(source[item.key()]);
    }
    model->lora()->MergeInto(*merged);
    auto reference_params = dense->named_parameters(true);
    for (const auto& item : merged->named_parameters(true)) {
      EXPECT_LT((item.value() - reference_params[item.key()]).abs().max().item<double>(), 1e-6) << item.key();
    }
  }
}

TEST(LoraTest, AdaptersChangeTheFunctionOnlyInTheirTargetsRows) {
  // One target at a time: the dense reference differs from the base model only in that target's rows.
  torch::manual_seed(3);
  const ModelConfig config = LlamaLike();
  for (const std::string& target : LoraTargetNames()) {
    LoraConfig lora = EveryTarget(2);
    lora.targets = {target};
    Transformer model(config);
    model->AddLora(lora);
    DrawB(model);
    model->eval();
    Transformer dense = DenseReference(model, lora);
    dense->eval();
    const torch::Tensor tokens = Tokens(config);
    EXPECT_LT((model->forward(tokens) - dense->forward(tokens)).abs().max().item<double>(), 1e-4) << target;
  }
}

TEST(LoraTest, TheTrialsOptimizerTrainsOnlyAdaptersAndPositionalParametersWithTheChainRulesGradients) {
  torch::manual_seed(4);
  TrialConfig trial;
  trial.model = LlamaLike();
  trial.train.lora = EveryTarget();
  Transformer model(trial.model);
  model->AddLora(trial.train.lora);
  DrawB(model);
  std::unique_ptr<FlatAdamW> optimizer = MakeOptimizer(trial, model);
  const torch::Tensor tokens = Tokens(trial.model);
  const torch::Tensor targets = tokens.roll(-1, 1);
  auto loss_of = [&](Transformer& m) {
    return torch::nn::functional::cross_entropy(m->forward(tokens).view({-1, trial.model.vocab_size}), targets.view(-1));
  };
  optimizer->ZeroGrad();
  loss_of(model).backward();
  Transformer dense = DenseReference(model, trial.train.lora);
  loss_of(dense).backward();
  auto dense_params = dense->named_parameters(true);
  int64_t adapters = 0;
  for (const auto& item : model->named_parameters(true)) {
    const std::string& name = item.key();
    const bool adapter = name.rfind("lora.", 0) == 0;
    const bool positional = name.rfind("positional.", 0) == 0;
    if (!adapter && !positional) {
      EXPECT_FALSE(item.value().requires_grad()) << name << " trains";
      EXPECT_FALSE(item.value().grad().defined() && item.value().grad().abs().max().item<double>() > 0) << name;
      continue;
    }
    ASSERT_TRUE(item.value().grad().defined()) << name << " has no gradient";
    if (positional) {
      EXPECT_LT((item.value().grad() - dense_params[name].grad()).abs().max().item<double>(), 1e-4) << name;
      continue;
    }
    // W' = W + s B A: dL/dB = s G A^T, dL/dA = s B^T G, G = dL/dW' on the target's rows.
    ++adapters;
    const std::string stem = name.substr(0, name.size() - 2);  // lora.blocks_<layer>_<target>
    const size_t layer_end = stem.find('_', std::string("lora.blocks_").size());
    const int64_t layer = std::stoll(stem.substr(std::string("lora.blocks_").size(), layer_end));
    const std::string target = stem.substr(layer_end + 1);
    const Rows rows = TargetRows(trial.model, target);
    const torch::Tensor g =
        dense_params["blocks_" + std::to_string(layer) + "_" + rows.weight].grad().narrow(0, rows.first, rows.count);
    auto params = model->named_parameters(true);
    const double s = trial.train.lora.scaling();
    const torch::Tensor expected = name.back() == 'b' ? s * torch::mm(g, params[stem + "_a"].t())
                                                      : s * torch::mm(params[stem + "_b"].t(), g);
    const double scale = expected.abs().max().item<double>();
    EXPECT_GT(scale, 0.0) << name;
    EXPECT_LT((item.value().grad() - expected).abs().max().item<double>(), 1e-4 * std::max(1.0, scale)) << name;
  }
  EXPECT_EQ(adapters, 2 * trial.model.layers * 7);
}

TEST(LoraTest, DropoutAppliesWhileTrainingOnly) {
  torch::manual_seed(5);
  const ModelConfig config = LlamaLike();
  LoraConfig lora = EveryTarget();
  lora.dropout = 0.5;
  Transformer model(config);
  model->AddLora(lora);
  DrawB(model);
  const torch::Tensor tokens = Tokens(config);
  model->eval();
  Transformer dense = DenseReference(model, lora);
  dense->eval();
  EXPECT_LT((model->forward(tokens) - dense->forward(tokens)).abs().max().item<double>(), 1e-4);
  model->train();
  EXPECT_GT((model->forward(tokens) - dense->forward(tokens)).abs().max().item<double>(), 1e-3);
}

}  // namespace
}  // namespace rung
