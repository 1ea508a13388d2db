// core/model/mlp_activation.h
//
// The MLP's activation (docs/science.md section 4) as one autograd operation:
//
//   gelu:    out = 0.5 h (1 + erf(h / sqrt 2))                    h: [..., H] -> [..., H]
//   swiglu:  out = silu(g) u,  silu(g) = g / (1 + exp(-g))         h = [g, u]: [..., 2H] -> [..., H]
//
// (SwiGLU's gate is the first half of the fused up projection). GELU is torch::gelu, ATen's own
// kernel, which is one vectorized pass each way already. SwiGLU on contiguous fp32 (and fp64) CPU
// input takes a fused kernel: one pass forward and one backward, writing the gradient of the whole
// projection output at once (no chunk, no concatenation of the halves' gradients), keeping only its
// input for the backward; where ATen's composite takes about five passes each way. Everything else
// (CUDA, bf16) takes the composite. ActivationImplementation selects one explicitly for tests (GELU
// has one implementation whatever it says).
#pragma once

#include <torch/torch.h>

namespace rung {

enum class MlpActivationKind { kGelu, kSwiGlu };
enum class ActivationImplementation { kAuto, kFusedCpu, kComposite };

// The activation of the up projection's output `hidden` (gradients flow to it).
torch::Tensor MlpActivation(const torch::Tensor& hidden, MlpActivationKind kind,
                            ActivationImplementation implementation = ActivationImplementation::kAuto);

}  // namespace rung
