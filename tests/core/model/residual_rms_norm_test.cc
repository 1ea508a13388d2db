#include "core/model/residual_rms_norm.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tests/core/model/central_differences.h"

namespace rung {
namespace {

struct NormInputs {
  torch::Tensor x, delta, weight;
};

NormInputs MakeInputs(std::vector<int64_t> shape, bool with_delta, torch::Dtype dtype, uint64_t seed) {
  torch::manual_seed(seed);
  NormInputs in;
  in.x = torch::randn(shape, dtype).requires_grad_(true);
  if (with_delta) in.delta = torch::randn(shape, dtype).requires_grad_(true);
  in.weight = (torch::rand({shape.back()}, dtype) + 0.5).requires_grad_(true);
  return in;
}

// A loss that reads both outputs (or only the normed one), with fixed random weights.
torch::Tensor LossOf(const ResidualNorm& out, const torch::Tensor& normed_weights, const torch::Tensor& residual_weights) {
  auto loss = (out.normed * normed_weights).sum();
  if (residual_weights.defined()) loss = loss + (out.residual * residual_weights).sum();
  return loss;
}

TEST(ResidualRmsNorm, FusedKernelMatchesTheCompositeForwardAndBackward) {
  // Shapes with one row per task and with many rows split over the threads' chunks.
  for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 5, 24}, std::vector<int64_t>{3, 700, 128}}) {
    for (bool with_delta : {false, true}) {
      for (bool residual_used : {false, true}) {
        NormInputs fused_in = MakeInputs(shape, with_delta, torch::kFloat, 5);
        NormInputs composite_in = MakeInputs(shape, with_delta, torch::kFloat, 5);
        ResidualNorm fused = AddRmsNorm(fused_in.x, fused_in.delta, fused_in.weight, 1e-6, NormImplementation::kFusedCpu);
        ResidualNorm composite = AddRmsNorm(composite_in.x, composite_in.delta, composite_in.weight, 1e-6,
                                            NormImplementation::kComposite);
        ASSERT_TRUE(torch::equal(fused.residual, composite.residual));
        ASSERT_TRUE(torch::allclose(fused.normed, composite.normed, 1e-5, 1e-6));
        auto normed_weights = torch::randn(shape);
        auto residual_weights = residual_used ? torch::randn(shape) : torch::Tensor();
        LossOf(fused, normed_weights, residual_weights).backward();
        LossOf(composite, normed_weights, residual_weights).backward();
        EXPECT_TRUE(torch::allclose(fused_in.x.grad(), composite_in.x.grad(), 1e-4, 1e-5));
        if (with_delta) EXPECT_TRUE(torch::allclose(fused_in.delta.grad(), composite_in.delta.grad(), 1e-4, 1e-5));
        EXPECT_TRUE(torch::allclose(fused_in.weight.grad(), composite_in.weight.grad(), 1e-4, 1e-3))
            << (fused_in.weight.grad() - composite_in.weight.grad()).abs().max().item<double>();
      }
    }
  }
}

// d loss / d input by the fused kernel's backward against central differences, in double, for every
// element of x, delta and the weight.
TEST(ResidualRmsNorm, FusedGradientsMatchFiniteDifferences) {
  const std::vector<int64_t> shape = {2, 3, 8};
  NormInputs in = MakeInputs(shape, true, torch::kDouble, 7);
  auto normed_weights = torch::randn(shape, torch::kDouble);
  auto residual_weights = torch::randn(shape, torch::kDouble);
  auto loss_of = [&]() {
    return LossOf(AddRmsNorm(in.x, in.delta, in.weight, 1e-6, NormImplementation::kFusedCpu), normed_weights,
                  residual_weights);
  };
  loss_of().backward();
  for (torch::Tensor* param : {&in.x, &in.delta, &in.weight}) {
    ExpectGradientMatchesCentralDifferences(*param, loss_of, 1e-6, 1e-7);
  }
}

TEST(ResidualRmsNorm, NormalizesEachRowToUnitRootMeanSquareTimesTheWeight) {
  auto x = torch::tensor({{3.0f, 4.0f}, {1.0f, -1.0f}});
  auto weight = torch::tensor({2.0f, 0.5f});
  auto normed = RmsNorm(x, weight, 0.0);
  const float rms0 = std::sqrt(12.5f);
  EXPECT_NEAR(normed[0][0].item<float>(), 2.0f * 3.0f / rms0, 1e-6);
  EXPECT_NEAR(normed[0][1].item<float>(), 0.5f * 4.0f / rms0, 1e-6);
  EXPECT_NEAR(normed[1][0].item<float>(), 2.0f, 1e-6);
  EXPECT_NEAR(normed[1][1].item<float>(), -0.5f, 1e-6);
}

TEST(ResidualRmsNorm, StridedAndNarrowInputTakeTheCompositePath) {
  // A strided view (QK-norm's slice of the q/k/v projection) and bf16 give what the composite gives.
  auto base = torch::randn({2, 4, 6, 8});
  auto view = base.narrow(2, 1, 3);
  auto weight = torch::rand({8}) + 0.5;
  EXPECT_TRUE(torch::equal(RmsNorm(view, weight, 1e-6), RmsNorm(view, weight, 1e-6, NormImplementation::kComposite)));
  auto narrow = torch::randn({3, 8}).to(torch::kBFloat16);
  EXPECT_TRUE(torch::equal(RmsNorm(narrow, weight, 1e-6), RmsNorm(narrow, weight, 1e-6, NormImplementation::kComposite)));
  EXPECT_THROW(RmsNorm(narrow, weight, 1e-6, NormImplementation::kFusedCpu), c10::Error);
}

TEST(ResidualRmsNorm, ResidualOnlyGradientPassesThroughToBothInputs) {
  NormInputs in = MakeInputs({4, 16}, true, torch::kFloat, 9);
  ResidualNorm out = AddRmsNorm(in.x, in.delta, in.weight, 1e-6, NormImplementation::kFusedCpu);
  auto weights = torch::randn({4, 16});
  (out.residual * weights).sum().backward();
  EXPECT_TRUE(torch::equal(in.x.grad(), weights));
  EXPECT_TRUE(torch::equal(in.delta.grad(), weights));
  EXPECT_FALSE(in.weight.grad().defined() && in.weight.grad().abs().sum().item<float>() != 0.0f);
}

}  // namespace
}  // namespace rung
