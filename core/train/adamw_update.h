// core/train/adamw_update.h
//
// One AdamW update of a flat buffer of parameters in place (FlatAdamW's step of one group):
//
//   p = p (1 - decay);  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p = p - (lr / bias1) m / (sqrt(v / bias2) + eps)
//
// On contiguous fp32 or fp64 CPU buffers a fused kernel reads g, p, m, v once and writes p, m, v once;
// elsewhere (CUDA) the composite of ATen's in-place ops computes the same in about eight passes.
// AdamWImplementation selects one explicitly for tests.
#pragma once

#include <torch/torch.h>

namespace rung {

enum class AdamWImplementation { kAuto, kFusedCpu, kComposite };

struct AdamWCoefficients {
  double lr = 1e-3;              // this group's learning rate at this step
  double decay = 0.0;            // the fraction of p removed by weight decay at this step
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double bias1 = 1.0, bias2 = 1.0;  // 1 - beta^t
};

// params, grads, exp_avg, exp_avg_sq: 1-d buffers of one size, dtype and device. Updates params,
// exp_avg and exp_avg_sq in place; grads are read only.
void AdamWUpdate(torch::Tensor& params, const torch::Tensor& grads, torch::Tensor& exp_avg, torch::Tensor& exp_avg_sq,
                 const AdamWCoefficients& c, AdamWImplementation implementation = AdamWImplementation::kAuto);

}  // namespace rung
