// core/model/causal_softmax.h
//
// The softmax of causal attention from ATen operations, for the paths without a fused kernel
// (CUDA without the fused kernel, double precision, builds without BLAS access), and the key mask it
// shares with the fused kernel:
//
// Layout: scores [B * kv_heads, g * T, T], where row r of slab n belongs to batch entry b = n / kv_heads
// and query position i = r % T of query head h = (n % kv_heads) * g + r / T.
//   probs[n, r, j] = softmax_{s_i <= j <= i}( scores[n, r, j] - m_h (i - j) )
// with m = 0 without ALiBi and s_i = doc_start[b, i] (0 without cross-document masking).
// TrailingCausalSoftmax is the same for the last n of T positions (new queries over a key cache):
// scores [B * kv_heads, g * n, T], row r at position i = T - n + r % n, no document mask.
#pragma once

#include <torch/torch.h>

namespace rung {

// masked[b, 0, i, j] = j > i || j < doc_start[b, i]: the keys query i may not see. Bool on `device`,
// [B, 1, T, T], or [1, 1, T, T] (causality alone) when doc_start is undefined.
torch::Tensor MaskedKeys(int64_t time, const torch::Tensor& doc_start, const torch::Device& device);

// alibi_slopes: [heads] or undefined; doc_start: [B, T] int64 or undefined (attention.h states its
// contract). Returns probs, same shape as scores.
torch::Tensor CausalSoftmax(const torch::Tensor& scores, int64_t time, int64_t kv_heads,
                            const torch::Tensor& alibi_slopes, const torch::Tensor& doc_start);

// scores [B * kv_heads, g * queries, T] for the queries at positions T - queries..T - 1; alibi_slopes:
// [heads] or undefined. Returns probs, same shape as scores.
torch::Tensor TrailingCausalSoftmax(const torch::Tensor& scores, int64_t queries, int64_t kv_heads,
                                    const torch::Tensor& alibi_slopes);

}  // namespace rung
