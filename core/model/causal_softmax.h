// core/model/causal_softmax.h
//
// The softmax of causal attention from ATen operations, for the paths without a fused kernel
// (CUDA without the fused kernel, double precision, builds without BLAS access):
//
// Layout: scores [B * kv_heads, g * T, T], where row r of slab n belongs to query position
// i = r % T of query head h = (n % kv_heads) * g + r / T.
//   probs[n, r, j] = softmax_j<=i( scores[n, r, j] - m_h (i - j) )   (m = 0 without ALiBi)
#pragma once

#include <torch/torch.h>

namespace rung {

// alibi_slopes: [heads] or undefined. Returns probs, same shape as scores.
torch::Tensor CausalSoftmax(const torch::Tensor& scores, int64_t time, int64_t kv_heads,
                            const torch::Tensor& alibi_slopes);

}  // namespace rung
