#include "core/model/rotary.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

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

}  // namespace
}  // namespace rung
