#include "core/model/mlp_activation.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tests/core/model/central_differences.h"

namespace rung {
namespace {

TEST(MlpActivation, FusedSwiGluMatchesTheCompositeForwardAndBackward) {
  {
    const MlpActivationKind kind = MlpActivationKind::kSwiGlu;
    // One task, and enough rows for every thread; values far into both tails.
    for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3, 10}, std::vector<int64_t>{3, 700, 128}}) {
      torch::manual_seed(21);
      auto base = torch::randn(shape) * 4.0;
      auto fused_in = base.clone().requires_grad_(true), composite_in = base.clone().requires_grad_(true);
      auto fused = MlpActivation(fused_in, kind, ActivationImplementation::kFusedCpu);
      auto composite = MlpActivation(composite_in, kind, ActivationImplementation::kComposite);
      ASSERT_EQ(fused.sizes(), composite.sizes());
      EXPECT_TRUE(torch::allclose(fused, composite, 1e-5, 1e-6)) << (fused - composite).abs().max().item<double>();
      auto weights = torch::randn(fused.sizes());
      (fused * weights).sum().backward();
      (composite * weights).sum().backward();
      EXPECT_TRUE(torch::allclose(fused_in.grad(), composite_in.grad(), 1e-5, 1e-5))
          << (fused_in.grad() - composite_in.grad()).abs().max().item<double>();
    }
  }
}

// The fused backward against central differences, in double, for every input element.
TEST(MlpActivation, FusedSwiGluGradientsMatchFiniteDifferences) {
  {
    const MlpActivationKind kind = MlpActivationKind::kSwiGlu;
    torch::manual_seed(23);
    auto hidden = (torch::randn({3, 8}, torch::kDouble) * 2.0).requires_grad_(true);
    const int64_t width = 4;
    auto weights = torch::randn({3, width}, torch::kDouble);
    auto loss_of = [&]() { return (MlpActivation(hidden, kind, ActivationImplementation::kFusedCpu) * weights).sum(); };
    loss_of().backward();
    ExpectGradientMatchesCentralDifferences(hidden, loss_of, 1e-6, 1e-8);
  }
}

TEST(MlpActivation, SwiGluGatesTheSecondHalfWithTheSiluOfTheFirst) {
  auto hidden = torch::tensor({{0.0f, 2.0f, 3.0f, -1.0f}});
  auto out = MlpActivation(hidden, MlpActivationKind::kSwiGlu);
  ASSERT_EQ(out.size(-1), 2);
  EXPECT_NEAR(out[0][0].item<float>(), 0.0f, 1e-7);
  EXPECT_NEAR(out[0][1].item<float>(), -2.0f / (1.0f + std::exp(-2.0f)), 1e-6);
}

TEST(MlpActivation, GeluIsTheExactGelu) {
  auto hidden = torch::tensor({-1.0, 0.0, 2.0}, torch::kDouble);
  auto out = MlpActivation(hidden, MlpActivationKind::kGelu);
  for (int64_t i = 0; i < 3; ++i) {
    const double x = hidden[i].item<double>();
    EXPECT_NEAR(out[i].item<double>(), 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))), 1e-12);
  }
}

TEST(MlpActivation, StridedAndNarrowInputTakeTheCompositePath) {
  auto strided = torch::randn({8, 6}).t();
  auto gate_up = strided.chunk(2, -1);
  EXPECT_TRUE(torch::equal(MlpActivation(strided, MlpActivationKind::kSwiGlu), torch::silu(gate_up[0]) * gate_up[1]));
  auto narrow = torch::randn({3, 8}).to(torch::kBFloat16);
  EXPECT_TRUE(torch::equal(MlpActivation(narrow, MlpActivationKind::kSwiGlu),
                           MlpActivation(narrow, MlpActivationKind::kSwiGlu, ActivationImplementation::kComposite)));
  EXPECT_THROW(MlpActivation(narrow, MlpActivationKind::kSwiGlu, ActivationImplementation::kFusedCpu), c10::Error);
}

}  // namespace
}  // namespace rung
