// Whole-model properties: causality, parameter arithmetic, attention against a naive reference.
#include "core/model/transformer.h"

#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/config/model_arithmetic.h"
#include "core/model/attention.h"
#include "core/model/cpu_attention.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

using testing_models::Tiny;

const char* kVariants[] = {"nope", "rope", "prope", "lerope", "adarope", "alibi"};
const char* kForms[] = {"none", "log_power", "qwen", "ssmax", "learned"};

TEST(Transformer, ChangingAFutureTokenChangesNoEarlierLogit) {
  for (const char* variant : kVariants) {
    for (const char* form : kForms) {
      torch::manual_seed(5);
      ModelConfig config = Tiny(variant, 4, 2);
      config.inverse_temperature.form = form;
      Transformer model(config);
      torch::NoGradGuard no_grad;
      auto tokens = torch::randint(0, 64, {2, 24}, torch::kLong);
      auto changed = tokens.clone();
      const int64_t position = 13;
      changed.select(1, position).add_(1).remainder_(64);
      auto before = model->forward(tokens), after = model->forward(changed);
      EXPECT_TRUE(torch::allclose(before.narrow(1, 0, position), after.narrow(1, 0, position), 0, 1e-6))
          << variant << "/" << form;
      EXPECT_FALSE(torch::allclose(before.narrow(1, position, 24 - position), after.narrow(1, position, 24 - position)))
          << variant << "/" << form;
    }
  }
}

int64_t TorchParameterCount(Transformer& model) {
  int64_t count = 0;
  for (const auto& param : model->parameters()) count += param.numel();
  return count;
}

TEST(Transformer, ParameterCountEqualsTheTorchFreeArithmetic) {
  struct Shape { int64_t layers, d_model, heads, kv_heads; std::string mlp; bool qk_norm; };
  std::vector<Shape> shapes = {{1, 16, 2, 0, "gelu", false}, {2, 32, 4, 2, "swiglu", true},
                               {3, 48, 6, 3, "gelu", true},  {2, 64, 8, 1, "swiglu", false}};
  struct Position { std::string variant, share, form; bool adascale = true, fixed_log = false, learned_base = false; };
  std::vector<Position> positions = {
      {"nope", "none", "none"},     {"rope", "none", "log_power"}, {"prope", "none", "qwen"},
      {"lerope", "none", "ssmax"},  {"adarope", "none", "learned"}, {"adarope", "layer", "none"},
      {"adarope", "global", "none", false}, {"adarope", "none", "none", true, true},
      {"adarope", "none", "none", true, false, true}, {"alibi", "none", "none"}};
  for (const Shape& shape : shapes) {
    for (const Position& position : positions) {
      ModelConfig config;
      config.vocab_size = 50;
      config.layers = shape.layers;
      config.d_model = shape.d_model;
      config.heads = shape.heads;
      config.kv_heads = shape.kv_heads;
      config.mlp = shape.mlp;
      config.qk_norm = shape.qk_norm;
      config.seq_len = 20;
      config.position.variant = position.variant;
      config.position.adarope.share_freq = position.share;
      config.position.adarope.adascale = position.adascale;
      config.position.adarope.fixed_log = position.fixed_log;
      config.position.adarope.learned_base = position.learned_base;
      config.inverse_temperature.form = position.form;
      config.inverse_temperature.learn_s = true;
      ResolveModelConfig(&config);
      Transformer model(config);
      EXPECT_EQ(TorchParameterCount(model), CountParameters(config).total())
          << shape.layers << "x" << shape.d_model << " " << position.variant << "/" << position.share << "/"
          << position.form;
      ParameterGroups groups = model->parameter_groups();
      int64_t grouped = 0;
      for (const auto* group : {&groups.decay, &groups.no_decay, &groups.positional, &groups.positional_freq}) {
        for (const auto& param : *group) grouped += param.numel();
      }
      EXPECT_EQ(grouped, TorchParameterCount(model)) << "every parameter belongs to exactly one optimizer group";
    }
  }
}

// softmax(q k^T / sqrt(d) + bias) v, one head at a time.
torch::Tensor NaiveAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const std::vector<double>& slopes) {
  const int64_t batch = q.size(0), heads = q.size(1), time = q.size(2), dim = q.size(3);
  const int64_t groups = heads / k.size(1);
  auto out = torch::zeros({batch, time, heads, dim});
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      auto scores = torch::matmul(q[b][h], k[b][h / groups].t()) / std::sqrt(static_cast<double>(dim));
      for (int64_t i = 0; i < time; ++i) {
        for (int64_t j = 0; j < time; ++j) {
          if (j > i) scores[i][j] = -INFINITY;
          else if (!slopes.empty()) scores[i][j] -= slopes[h] * (i - j);
        }
      }
      out.select(0, b).select(1, h).copy_(torch::matmul(torch::softmax(scores, -1), v[b].select(1, h / groups)));
    }
  }
  return out.view({batch, time, heads * dim});
}

TEST(Attention, GroupedQueryStackingAndAlibiMatchANaivePerHeadReference) {
  torch::manual_seed(2);
  for (int64_t kv_heads : {6, 3, 2, 1}) {
    for (bool alibi : {false, true}) {
      const int64_t batch = 2, heads = 6, time = 70, dim = 4;  // more than one causal row block
      auto q = torch::randn({batch, heads, time, dim});
      auto k = torch::randn({batch, kv_heads, time, dim});
      auto v = torch::randn({batch, time, kv_heads, dim});
      std::vector<double> slopes = alibi ? AlibiSlopes(heads) : std::vector<double>{};
      torch::Tensor slope_tensor = alibi ? torch::tensor(slopes).to(torch::kFloat) : torch::Tensor();
      auto expected = NaiveAttention(q, k, v, slopes);
      auto v_heads = v.transpose(1, 2).contiguous();
      std::vector<AttentionKernel> kernels = {AttentionKernel::kComposite};
      if (CpuAttentionAvailable()) kernels.push_back(AttentionKernel::kCpuSlabs);
      std::vector<torch::Tensor> grads;
      for (AttentionKernel kernel : kernels) {
        auto qs = (q * AttentionQueryScale(kernel, dim)).detach().requires_grad_(true);
        auto ks = k.detach().clone().requires_grad_(true), vs = v_heads.detach().clone().requires_grad_(true);
        auto out = CausalAttention(qs, ks, vs, slope_tensor, kernel);
        EXPECT_TRUE(torch::allclose(out, expected, 1e-5, 1e-6))
            << "kernel " << static_cast<int>(kernel) << " kv_heads " << kv_heads << " alibi " << alibi;
        (out * torch::linspace(-1, 1, out.numel()).view(out.sizes())).sum().backward();
        grads.insert(grads.end(), {qs.grad(), ks.grad(), vs.grad()});
      }
      // The CPU kernel's backward equals autograd's through the composite path.
      for (size_t index = 3; index < grads.size(); ++index) {
        EXPECT_TRUE(torch::allclose(grads[index], grads[index - 3], 1e-4, 1e-6)) << "gradient " << index % 3;
      }
    }
  }
}

TEST(Transformer, InitialisationFollowsThePublishedRecipe) {
  torch::manual_seed(0);
  ModelConfig config = Tiny("rope");
  config.d_model = 256;
  config.heads = 4;
  config.head_dim = 64;
  config.mlp_hidden = 1024;
  config.layers = 8;
  Transformer model(config);
  auto params = model->named_parameters();
  EXPECT_NEAR(params["embedding"].std().item<double>(), 1.0 / 16.0, 0.004);
  EXPECT_NEAR(params["blocks_0_qkv"].std().item<double>(), 1.0 / 16.0, 0.002);
  EXPECT_NEAR(params["blocks_0_attn_out"].std().item<double>(), 1.0 / 16.0 / 4.0, 0.001);
  EXPECT_NEAR(params["blocks_0_mlp_down"].std().item<double>(), 1.0 / 32.0 / 4.0, 0.0005);
  EXPECT_TRUE(torch::equal(params["blocks_0_attn_norm"], torch::ones({256})));
}

}  // namespace
}  // namespace rung
