// core/model/residual_rms_norm.h
//
// A pre-norm block's residual add and the RMSNorm that reads it, as one operation:
//
//   residual = x + delta                     (x alone when delta is undefined)
//   normed   = residual * rsqrt(mean(residual^2 over the last dim) + eps) * weight
//
// On CPU in fp32 (and fp64, which the finite-difference tests use) a fused kernel makes one pass over
// each row forward (the sum, its mean square, the scaled row) and one backward, where the composite
// path of ATen ops makes about five each way; its backward also adds the gradient that reaches
// `residual` from the layers above, so that autograd has no separate accumulation to do. It keeps
// `residual` and one inverse RMS per row for the backward, nothing else. Everything else (CUDA, bf16
// or fp16, strided input) takes the composite path, which computes the same in the input's dtype.
// NormImplementation selects one explicitly for tests.
#pragma once

#include <torch/torch.h>

namespace rung {

enum class NormImplementation { kAuto, kFusedCpu, kComposite };

struct ResidualNorm {
  torch::Tensor residual;  // x + delta (x itself without delta)
  torch::Tensor normed;    // RMSNorm(residual) * weight, in residual's dtype
};

// x, delta: [..., d] of one dtype (delta may be undefined); weight: [d], converted to x's dtype where
// it is stored in another. Gradients reach x, delta and weight.
ResidualNorm AddRmsNorm(const torch::Tensor& x, const torch::Tensor& delta, const torch::Tensor& weight, double eps,
                        NormImplementation implementation = NormImplementation::kAuto);

// RMSNorm alone: AddRmsNorm(x, {}, weight, eps).normed.
torch::Tensor RmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                      NormImplementation implementation = NormImplementation::kAuto);

}  // namespace rung
