// xPos against its definition: each pair's logit is RoPE's times zeta_f^((n - m)/gamma).
#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/positional_encoding.h"
#include "core/model/rotary.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

torch::Tensor PairOnly(const torch::Tensor& x, int64_t pair) {
  torch::Tensor only = torch::zeros_like(x);
  only.narrow(-1, 2 * pair, 2).copy_(x.narrow(-1, 2 * pair, 2));
  return only;
}

TEST(Xpos, EachPairsLogitIsRopesTimesZetaToTheDistanceOverTheScaleBase) {
  const ModelConfig xpos_config = testing_models::Tiny("xpos");
  PositionalEncoding xpos(xpos_config);
  PositionalEncoding rope(testing_models::Tiny("rope"));
  const int64_t time = xpos_config.seq_len, heads = xpos_config.heads, head_dim = xpos_config.head_dim;
  const LayerTables x = xpos->Tables(time, torch::kCPU)[1];
  const LayerTables r = rope->Tables(time, torch::kCPU)[1];
  ASSERT_TRUE(x.key_cos.defined() && x.key_sin.defined());
  torch::manual_seed(3);
  const torch::Tensor q = torch::randn({1, time, heads, head_dim}), k = torch::randn({1, time, heads, head_dim});
  const torch::Tensor n = torch::arange(time, torch::kDouble).view({time, 1});
  const torch::Tensor distance = n - n.view({1, time});  // n - m
  for (int64_t pair = 0; pair < head_dim / 2; ++pair) {
    const torch::Tensor qf = PairOnly(q, pair), kf = PairOnly(k, pair);
    const torch::Tensor got = torch::matmul(RotateAndTranspose(qf, x.cos, x.sin, {}),
                                            RotateAndTranspose(kf, x.key_cos, x.key_sin, {}).transpose(-1, -2));
    const torch::Tensor rope_logit =
        torch::matmul(RotateAndTranspose(qf, r.cos, r.sin, {}), RotateAndTranspose(kf, r.cos, r.sin, {}).transpose(-1, -2));
    const double zeta = (2.0 * static_cast<double>(pair) / static_cast<double>(head_dim) + 0.4) / 1.4;
    const torch::Tensor decay = torch::pow(torch::full_like(distance, zeta), distance / 512.0).to(torch::kFloat);
    EXPECT_TRUE(torch::allclose(got, rope_logit * decay, 1e-4, 1e-5)) << "pair " << pair;
  }
}

TEST(Xpos, TheDecayIsRelativeSoAShiftedWindowScoresAlike) {
  const ModelConfig config = testing_models::Tiny("xpos");
  PositionalEncoding xpos(config);
  const int64_t time = 8, shift = 5, heads = config.heads, head_dim = config.head_dim;
  torch::manual_seed(4);
  const torch::Tensor q = torch::randn({1, time, heads, head_dim}), k = torch::randn({1, time, heads, head_dim});
  auto logits = [&](int64_t offset) {
    const LayerTables t = xpos->Tables(offset + time, torch::kCPU)[0];
    auto at = [&](const torch::Tensor& table) { return table.narrow(0, offset, time).contiguous(); };
    return torch::matmul(RotateAndTranspose(q, at(t.cos), at(t.sin), {}),
                         RotateAndTranspose(k, at(t.key_cos), at(t.key_sin), {}).transpose(-1, -2));
  };
  EXPECT_TRUE(torch::allclose(logits(0), logits(shift), 1e-4, 1e-5));
}

}  // namespace
}  // namespace rung
