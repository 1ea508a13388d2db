// core/model/attention.h
//
// Causal multi-head / grouped-query attention over already rotated and scaled queries and keys.
//
// Exact path (every build): the g = heads/kv_heads query heads that share a KV head are stacked
// along time, so Q K^T is one batched product [B*kv_heads, g*T, d] x [B*kv_heads, d, T] with no
// copy of K or V per query head; the causal mask (and ALiBi bias) enters as the additive input of
// baddbmm; softmax; one batched product with V. Nothing per head, nothing looped.
// Fused path (LibTorch >= 2.0): at::scaled_dot_product_attention (flash / memory-efficient kernels
// on CUDA). Both compute softmax(q k^T / sqrt(d) + bias) v.
#pragma once

#include <torch/torch.h>

namespace rung {

// The additive logit bias for a sequence of T positions: -inf above the diagonal, plus
// -m_h (i - j) for ALiBi. Built once per forward, shared by every layer.
struct AttentionBias {
  int64_t time = 0;
  torch::Tensor exact;  // [1, g*T, T] or, with ALiBi, [B*kv_heads, g*T, T]
  torch::Tensor fused;  // undefined (plain causal) or [1, heads, T, T] (ALiBi)
};

AttentionBias MakeAttentionBias(int64_t batch, int64_t time, int64_t heads, int64_t kv_heads,
                                const torch::Tensor& alibi_slopes, const torch::TensorOptions& options,
                                bool for_fused);

// True when this build has a fused attention kernel.
bool FusedAttentionAvailable();

// q: [B, heads, T, d] contiguous; k: [B, kv_heads, T, d] contiguous; v: [B, T, kv_heads, d].
// Returns [B, T, heads * d].
torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const AttentionBias& bias, bool fused);

}  // namespace rung
