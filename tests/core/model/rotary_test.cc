#include "core/model/rotary.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/core/model/central_differences.h"

namespace rung {
namespace {

struct RotaryInputs {
  torch::Tensor x, cos, sin, scale;
};

RotaryInputs MakeInputs(int64_t groups, bool with_scale, bool requires_grad) {
  torch::manual_seed(3);
  const int64_t batch = 2, time = 5, heads = 4, dim = 6;
  RotaryInputs in;
  // A non-contiguous view, as the model passes it (a slice of the fused QKV projection).
  in.x = torch::randn({batch, time, heads + 2, dim}).narrow(2, 1, heads);
  auto angles = torch::randn({time, groups, dim / 2});
  in.cos = angles.cos();
  in.sin = angles.sin();
  if (with_scale) in.scale = torch::rand({time, heads}) + 0.5;
  if (requires_grad) {
    in.x = in.x.detach().requires_grad_(true);
    in.cos = in.cos.detach().requires_grad_(true);
    in.sin = in.sin.detach().requires_grad_(true);
    if (with_scale) in.scale = in.scale.detach().requires_grad_(true);
  }
  return in;
}

TEST(Rotary, FusedKernelMatchesTheCompositeForwardAndBackward) {
  for (int64_t groups : {1, 2, 4}) {
    for (bool with_scale : {false, true}) {
      RotaryInputs fused_in = MakeInputs(groups, with_scale, true);
      RotaryInputs composite_in = MakeInputs(groups, with_scale, true);
      auto fused = RotateAndTranspose(fused_in.x, fused_in.cos, fused_in.sin, fused_in.scale, 0.7,
                                      RotaryImplementation::kFusedCpu);
      auto composite = RotateAndTranspose(composite_in.x, composite_in.cos, composite_in.sin, composite_in.scale,
                                          0.7, RotaryImplementation::kComposite);
      ASSERT_TRUE(torch::allclose(fused, composite, 1e-6, 1e-6));
      auto weights = torch::randn(fused.sizes());
      (fused * weights).sum().backward();
      (composite * weights).sum().backward();
      EXPECT_TRUE(torch::allclose(fused_in.x.grad(), composite_in.x.grad(), 1e-5, 1e-6));
      EXPECT_TRUE(torch::allclose(fused_in.cos.grad(), composite_in.cos.grad(), 1e-5, 1e-5));
      EXPECT_TRUE(torch::allclose(fused_in.sin.grad(), composite_in.sin.grad(), 1e-5, 1e-5));
      if (with_scale) EXPECT_TRUE(torch::allclose(fused_in.scale.grad(), composite_in.scale.grad(), 1e-5, 1e-5));
    }
  }
}

TEST(Rotary, WithoutTablesOnlyScalesAndTransposes) {
  RotaryInputs in = MakeInputs(1, true, false);
  auto out = RotateAndTranspose(in.x, torch::Tensor(), torch::Tensor(), in.scale);
  auto expected = (in.x * in.scale.unsqueeze(0).unsqueeze(-1)).permute({0, 2, 1, 3});
  EXPECT_TRUE(torch::allclose(out, expected));
}

TEST(Rotary, RotatesEachPairByItsAngle) {
  auto x = torch::tensor({1.0f, 0.0f, 0.0f, 2.0f}).view({1, 1, 1, 4});
  auto angles = torch::tensor({static_cast<float>(M_PI / 2), static_cast<float>(M_PI)}).view({1, 1, 2});
  auto out = RotateAndTranspose(x, angles.cos(), angles.sin(), torch::Tensor()).view({4});
  // (1, 0) rotated by 90 degrees -> (0, 1); (0, 2) rotated by 180 degrees -> (0, -2)
  EXPECT_TRUE(torch::allclose(out, torch::tensor({0.0f, 1.0f, 0.0f, -2.0f}), 1e-6, 1e-6)) << out;
}

// Per-sequence tables [B, T, G, d/2] (per-document length extension): each sequence rotated by its own.
TEST(Rotary, PerRowTablesRotateEachRowByItsOwnAngles) {
  RotaryInputs in = MakeInputs(2, true, false);
  auto angles = torch::randn({2, 5, 2, 3});
  auto out = RotateAndTranspose(in.x, angles.cos(), angles.sin(), in.scale, 0.7);
  for (int64_t b = 0; b < 2; ++b) {
    auto row = RotateAndTranspose(in.x.narrow(0, b, 1), angles[b].cos(), angles[b].sin(), in.scale, 0.7,
                                  RotaryImplementation::kFusedCpu);
    EXPECT_TRUE(torch::allclose(out.narrow(0, b, 1), row, 1e-6, 1e-6)) << b;
  }
  EXPECT_THROW(RotateAndTranspose(in.x, angles.cos().narrow(0, 0, 1).expand({3, 5, 2, 3}),
                                  angles.sin().narrow(0, 0, 1).expand({3, 5, 2, 3}), in.scale),
               c10::Error);  // a table per sequence needs the batch's sequence count
}

struct QkvInputs {
  torch::Tensor qkv, cos, sin, key_cos, key_sin, scale;
};

// The projection [B, T, heads + 2 kv, d] of a model with `heads` query heads and `kv` KV heads; tables of
// `groups` groups for q (and for k when they are shared), or k's own tables of `key_groups`.
QkvInputs MakeQkvInputs(int64_t heads, int64_t kv, int64_t groups, int64_t key_groups, bool with_scale) {
  torch::manual_seed(31);
  const int64_t batch = 2, time = 5, dim = 6;
  QkvInputs in;
  in.qkv = torch::randn({batch, time, heads + 2 * kv, dim}).requires_grad_(true);
  auto angles = torch::randn({time, groups, dim / 2});
  in.cos = angles.cos().requires_grad_(true);
  in.sin = angles.sin().requires_grad_(true);
  if (key_groups > 0) {
    auto key_angles = torch::randn({time, key_groups, dim / 2});
    in.key_cos = key_angles.cos().requires_grad_(true);
    in.key_sin = key_angles.sin().requires_grad_(true);
  }
  if (with_scale) in.scale = (torch::rand({time, heads}) + 0.5).requires_grad_(true);
  return in;
}

RotatedHeads Rotate(const QkvInputs& in, int64_t heads, RotaryImplementation implementation) {
  return RotateQkvAndTranspose(in.qkv, heads, in.cos, in.sin, in.key_cos, in.key_sin, in.scale, 0.7, implementation);
}

TEST(Rotary, FusedQkvKernelMatchesThreeCompositeRotationsForwardAndBackward) {
  struct Case { int64_t heads, kv, groups, key_groups; bool scale; };
  for (const Case& c : {Case{4, 4, 1, 0, false}, Case{4, 4, 2, 0, true}, Case{4, 2, 2, 0, true},
                        Case{4, 2, 4, 2, true}, Case{4, 1, 1, 1, false}}) {
    QkvInputs fused_in = MakeQkvInputs(c.heads, c.kv, c.groups, c.key_groups, c.scale);
    QkvInputs composite_in = MakeQkvInputs(c.heads, c.kv, c.groups, c.key_groups, c.scale);
    RotatedHeads fused = Rotate(fused_in, c.heads, RotaryImplementation::kFusedCpu);
    RotatedHeads composite = Rotate(composite_in, c.heads, RotaryImplementation::kComposite);
    ASSERT_TRUE(torch::allclose(fused.q, composite.q, 1e-6, 1e-6));
    ASSERT_TRUE(torch::allclose(fused.k, composite.k, 1e-6, 1e-6));
    ASSERT_TRUE(torch::equal(fused.v, composite.v));
    auto wq = torch::randn(fused.q.sizes()), wk = torch::randn(fused.k.sizes()), wv = torch::randn(fused.v.sizes());
    ((fused.q * wq).sum() + (fused.k * wk).sum() + (fused.v * wv).sum()).backward();
    ((composite.q * wq).sum() + (composite.k * wk).sum() + (composite.v * wv).sum()).backward();
    const std::string label = std::to_string(c.heads) + "/" + std::to_string(c.kv) + "/" + std::to_string(c.groups);
    EXPECT_TRUE(torch::allclose(fused_in.qkv.grad(), composite_in.qkv.grad(), 1e-5, 1e-6)) << label;
    EXPECT_TRUE(torch::allclose(fused_in.cos.grad(), composite_in.cos.grad(), 1e-5, 1e-5)) << label;
    EXPECT_TRUE(torch::allclose(fused_in.sin.grad(), composite_in.sin.grad(), 1e-5, 1e-5)) << label;
    if (c.key_groups > 0) {
      EXPECT_TRUE(torch::allclose(fused_in.key_cos.grad(), composite_in.key_cos.grad(), 1e-5, 1e-5)) << label;
      EXPECT_TRUE(torch::allclose(fused_in.key_sin.grad(), composite_in.key_sin.grad(), 1e-5, 1e-5)) << label;
    }
    if (c.scale) EXPECT_TRUE(torch::allclose(fused_in.scale.grad(), composite_in.scale.grad(), 1e-5, 1e-5)) << label;
  }
}

// The fused q/k/v kernel's gradients against central differences. The loss is linear in the projection
// and in each table, and bilinear in the scale, so central differences are exact up to fp32 rounding.
TEST(Rotary, FusedQkvGradientsMatchFiniteDifferences) {
  QkvInputs in = MakeQkvInputs(4, 2, 2, 2, true);
  torch::manual_seed(37);
  RotatedHeads first = Rotate(in, 4, RotaryImplementation::kFusedCpu);
  auto wq = torch::randn(first.q.sizes()), wk = torch::randn(first.k.sizes()), wv = torch::randn(first.v.sizes());
  auto loss_of = [&]() {
    RotatedHeads out = Rotate(in, 4, RotaryImplementation::kFusedCpu);
    return (out.q * wq).sum() + (out.k * wk).sum() + (out.v * wv).sum();
  };
  loss_of().backward();
  for (torch::Tensor* param : {&in.qkv, &in.cos, &in.sin, &in.key_cos, &in.key_sin, &in.scale}) {
    ExpectGradientMatchesCentralDifferences(*param, loss_of, 0.25, 2e-3, 7);
  }
}

TEST(Rotary, QkvRotationFallsBackToThreeCallsWhereTheFusedKernelCannotApply) {
  // Per-sequence tables [B, T, G, d/2] and a bf16 projection take the three calls.
  QkvInputs in = MakeQkvInputs(4, 2, 2, 0, false);
  auto per_row_cos = in.cos.detach().unsqueeze(0).expand({2, 5, 2, 3}).contiguous();
  auto per_row_sin = in.sin.detach().unsqueeze(0).expand({2, 5, 2, 3}).contiguous();
  RotatedHeads per_row = RotateQkvAndTranspose(in.qkv, 4, per_row_cos, per_row_sin, {}, {}, {}, 1.0);
  RotatedHeads shared = RotateQkvAndTranspose(in.qkv, 4, in.cos, in.sin, {}, {}, {}, 1.0);
  EXPECT_TRUE(torch::allclose(per_row.q, shared.q, 1e-6, 1e-6));
  EXPECT_TRUE(torch::allclose(per_row.k, shared.k, 1e-6, 1e-6));
  EXPECT_THROW(RotateQkvAndTranspose(in.qkv, 4, per_row_cos, per_row_sin, {}, {}, {}, 1.0, RotaryImplementation::kFusedCpu),
               c10::Error);
  auto narrow = in.qkv.detach().to(torch::kBFloat16);
  RotatedHeads bf16 = RotateQkvAndTranspose(narrow, 4, in.cos.detach(), in.sin.detach(), {}, {}, {}, 1.0);
  EXPECT_EQ(bf16.q.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(bf16.q.to(torch::kFloat), shared.q, 2e-2, 2e-2));
}

}  // namespace
}  // namespace rung
