// core/model/attention.h
//
// Causal multi-head / grouped-query attention over already rotated and scaled queries and keys.
//
// Three kernels compute the same softmax(q k^T / sqrt(d) - m_h (i - j), j <= i) v:
//   kCpuSlabs   fp32 on CPU: cpu_attention.h (causal blocks, BLAS per slab, one autograd node)
//   kComposite  any device and dtype: the g = heads/kv_heads query heads sharing a KV head are
//               stacked along time, so Q K^T is one batched product [B*kv_heads, g*T, d] x
//               [B*kv_heads, d, T] with no copy of K or V per head; CausalSoftmax; one product with V
//   kFused      LibTorch >= 2.0: at::scaled_dot_product_attention (flash kernels on CUDA)
// kAuto picks kFused on CUDA when available, kCpuSlabs for fp32 CPU, else kComposite.
//
// The exact path expects q already multiplied by 1/sqrt(d) (the rotation kernel does it for free);
// the fused kernel applies its own scale. AttentionQueryScale says which.
#pragma once

#include <torch/torch.h>

namespace rung {

enum class AttentionKernel { kAuto, kCpuSlabs, kComposite, kFused };

// True when this build has a fused attention kernel (LibTorch >= 2.0).
bool FusedAttentionAvailable();

// The kernel kAuto (or an explicit request) resolves to for tensors of this device and dtype.
AttentionKernel ResolveAttentionKernel(AttentionKernel requested, const torch::Device& device,
                                       torch::ScalarType dtype);

// The factor the caller must fold into q before CausalAttention with this kernel.
double AttentionQueryScale(AttentionKernel kernel, int64_t head_dim);

// q: [B, heads, T, d] contiguous (times AttentionQueryScale); k, v: [B, kv_heads, T, d]
// contiguous; alibi_slopes: [heads] or undefined. Returns [B, T, heads * d].
// REQUIRES: kernel resolved (not kAuto).
torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& alibi_slopes, AttentionKernel kernel);

}  // namespace rung
