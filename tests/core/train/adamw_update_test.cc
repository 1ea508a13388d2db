#include "core/train/adamw_update.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "core/train/flat_adamw.h"

namespace rung {
namespace {

struct Buffers {
  torch::Tensor params, grads, exp_avg, exp_avg_sq;
};

Buffers MakeBuffers(int64_t size, torch::Dtype dtype) {
  torch::manual_seed(13);
  return {torch::randn({size}, dtype), torch::Tensor(), torch::zeros({size}, dtype), torch::zeros({size}, dtype)};
}

TEST(AdamWUpdate, FusedKernelMatchesTheCompositeOverSeveralSteps) {
  for (torch::Dtype dtype : {torch::kFloat, torch::kDouble}) {
    // Large enough that the update is split over the threads.
    Buffers fused = MakeBuffers(100003, dtype), composite = MakeBuffers(100003, dtype);
    for (int64_t step = 1; step <= 5; ++step) {
      auto grads = torch::randn({100003}, dtype) * (step % 2 ? 1.0 : 1e-3);
      AdamWCoefficients c;
      c.lr = 1e-2 / static_cast<double>(step);
      c.decay = step == 3 ? 0.0 : c.lr * 0.1;
      c.bias1 = 1.0 - std::pow(c.beta1, static_cast<double>(step));
      c.bias2 = 1.0 - std::pow(c.beta2, static_cast<double>(step));
      AdamWUpdate(fused.params, grads, fused.exp_avg, fused.exp_avg_sq, c, AdamWImplementation::kFusedCpu);
      AdamWUpdate(composite.params, grads, composite.exp_avg, composite.exp_avg_sq, c, AdamWImplementation::kComposite);
    }
    const double tolerance = dtype == torch::kFloat ? 1e-6 : 1e-14;
    EXPECT_TRUE(torch::allclose(fused.exp_avg, composite.exp_avg, tolerance, tolerance));
    EXPECT_TRUE(torch::allclose(fused.exp_avg_sq, composite.exp_avg_sq, tolerance, tolerance));
    EXPECT_TRUE(torch::allclose(fused.params, composite.params, tolerance, tolerance))
        << (fused.params - composite.params).abs().max().item<double>();
  }
}

TEST(AdamWUpdate, StridedBuffersTakeTheCompositePathAndTheFusedKernelRefusesThem) {
  auto params = torch::randn({8, 2}).select(1, 0);
  auto grads = torch::randn({8});
  auto m = torch::zeros({8}), v = torch::zeros({8});
  AdamWCoefficients c;
  AdamWUpdate(params, grads, m, v, c);  // composite: no throw
  EXPECT_TRUE(torch::allclose(m, 0.1 * grads));
  EXPECT_THROW(AdamWUpdate(params, grads, m, v, c, AdamWImplementation::kFusedCpu), c10::Error);
}

// FlatAdamW (one flat buffer, the fused update) against LibTorch's own torch::optim::AdamW on the same
// parameters and gradients: coupled weight decay, bias correction, two tensors in one group.
TEST(AdamWUpdate, FlatAdamWFollowsTorchOptimAdamW) {
  torch::manual_seed(17);
  std::vector<torch::Tensor> ours = {torch::randn({7, 5}).requires_grad_(true), torch::randn({11}).requires_grad_(true)};
  std::vector<torch::Tensor> theirs;
  for (const auto& p : ours) theirs.push_back(p.detach().clone().requires_grad_(true));
  const double lr = 3e-2, weight_decay = 0.1;
  FlatAdamWOptions options;
  options.lr = lr;
  options.beta1 = 0.9;
  options.beta2 = 0.95;
  options.eps = 1e-8;
  FlatAdamW flat({{"decay", ours, 1.0, weight_decay, 0}}, options);
  torch::optim::AdamW reference(theirs, torch::optim::AdamWOptions(lr).betas({0.9, 0.95}).eps(1e-8).weight_decay(weight_decay));
  for (int step = 0; step < 6; ++step) {
    flat.ZeroGrad();
    reference.zero_grad();
    std::vector<torch::Tensor> grads = {torch::randn({7, 5}), torch::randn({11})};
    for (size_t i = 0; i < ours.size(); ++i) {
      (ours[i] * grads[i]).sum().backward();
      (theirs[i] * grads[i]).sum().backward();
    }
    flat.Step(1.0);
    reference.step();
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    EXPECT_TRUE(torch::allclose(ours[i], theirs[i], 1e-5, 1e-6)) << (ours[i] - theirs[i]).abs().max().item<double>();
  }
}

}  // namespace
}  // namespace rung
