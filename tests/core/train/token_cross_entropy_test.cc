#include "core/train/token_cross_entropy.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "tests/core/model/central_differences.h"

namespace rung {
namespace {

TEST(TokenCrossEntropy, FusedKernelMatchesTheCompositeForwardAndBackward) {
  // One row per task, and enough rows (of a BPE-sized vocabulary) for every thread.
  for (auto [rows, vocab] : {std::pair<int64_t, int64_t>{3, 7}, std::pair<int64_t, int64_t>{700, 4096}}) {
    torch::manual_seed(41);
    auto base = torch::randn({rows, vocab}) * 5.0;
    auto targets = torch::randint(0, vocab, {rows}, torch::kLong);
    auto fused_in = base.clone().requires_grad_(true), composite_in = base.clone().requires_grad_(true);
    auto fused = TokenCrossEntropy(fused_in, targets, CrossEntropyImplementation::kFusedCpu);
    auto composite = TokenCrossEntropy(composite_in, targets, CrossEntropyImplementation::kComposite);
    EXPECT_TRUE(torch::allclose(fused, composite, 1e-5, 1e-5)) << (fused - composite).abs().max().item<double>();
    auto weights = torch::randn({rows});
    (fused * weights).sum().backward();
    (composite * weights).sum().backward();
    EXPECT_TRUE(torch::allclose(fused_in.grad(), composite_in.grad(), 1e-5, 1e-6))
        << (fused_in.grad() - composite_in.grad()).abs().max().item<double>();
  }
}

// The fused backward against central differences, in double, for every logit.
TEST(TokenCrossEntropy, FusedGradientsMatchFiniteDifferences) {
  torch::manual_seed(43);
  auto logits = (torch::randn({4, 6}, torch::kDouble) * 3.0).requires_grad_(true);
  auto targets = torch::tensor({0, 5, 2, 2}, torch::kLong);
  auto weights = torch::randn({4}, torch::kDouble);
  auto loss_of = [&]() { return (TokenCrossEntropy(logits, targets, CrossEntropyImplementation::kFusedCpu) * weights).sum(); };
  loss_of().backward();
  ExpectGradientMatchesCentralDifferences(logits, loss_of, 1e-6, 1e-8);
}

TEST(TokenCrossEntropy, IsTheNegativeLogProbabilityOfTheTarget) {
  auto logits = torch::tensor({{0.0f, std::log(3.0f)}, {2.0f, 2.0f}});
  auto losses = TokenCrossEntropy(logits, torch::tensor({1, 0}, torch::kLong));
  EXPECT_NEAR(losses[0].item<float>(), -std::log(0.75f), 1e-6);
  EXPECT_NEAR(losses[1].item<float>(), std::log(2.0f), 1e-6);
}

TEST(TokenCrossEntropy, RefusesATargetOutsideTheVocabulary) {
  auto logits = torch::randn({2, 5});
  try {
    (void)TokenCrossEntropy(logits, torch::tensor({1, 5}, torch::kLong));
    FAIL() << "no error";
  } catch (const c10::Error& error) {
    EXPECT_NE(std::string(error.what()).find("target 5 is out of bounds for 5 classes"), std::string::npos) << error.what();
  }
  EXPECT_THROW((void)TokenCrossEntropy(logits, torch::tensor({-1, 0}, torch::kLong)), c10::Error);
}

TEST(TokenCrossEntropy, NarrowLogitsTakeTheComposite) {
  auto logits = torch::randn({3, 5}).to(torch::kBFloat16);
  auto targets = torch::tensor({0, 1, 4}, torch::kLong);
  EXPECT_TRUE(torch::equal(TokenCrossEntropy(logits, targets),
                           TokenCrossEntropy(logits, targets, CrossEntropyImplementation::kComposite)));
  EXPECT_THROW((void)TokenCrossEntropy(logits, targets, CrossEntropyImplementation::kFusedCpu), c10::Error);
}

}  // namespace
}  // namespace rung
