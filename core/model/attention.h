// core/model/attention.h
//
// Causal multi-head / grouped-query attention over already rotated and scaled queries and keys,
// optionally masked across documents.
//
// Three kernels compute the same softmax(q k^T / sqrt(d) - m_h (i - j), s_i <= j <= i) v, where
// s_i = doc_start[b, i] is the first position of query i's document in a packed window (cross-document
// masking, data.cross_doc_mask), or 0 without it:
//   kCpuSlabs   fp32 on CPU: cpu_attention.h (causal blocks, BLAS per slab, one autograd node)
//   kComposite  any device and dtype: the g = heads/kv_heads query heads sharing a KV head are
//               stacked along time, so Q K^T is one batched product [B*kv_heads, g*T, d] x
//               [B*kv_heads, d, T] with no copy of K or V per head; CausalSoftmax; one product with V
//   kFused      LibTorch >= 2.0: at::scaled_dot_product_attention (flash kernels on CUDA; ALiBi or
//               the document mask pass an explicit mask, which leaves the flash kernel out)
//   kCpuTiled   fp32 on CPU, forward only: tiled_attention.h (FlashAttention's online softmax over key
//               tiles; memory grows with T, not T^2)
// kAuto picks kFused on CUDA when available, kCpuSlabs for fp32 CPU, else kComposite. kCpuSlabs runs as
// kCpuTiled whenever no gradient is needed (evaluation, extrapolation, diagnostics: no-grad mode or
// inputs that do not require one), so only training keeps P; kComposite is the exact reference.
//
// ALiBi distances stay i - j and rotary positions stay positions in the window under the document
// mask (document-relative positions are not part of it).
//
// The exact path expects q already multiplied by 1/sqrt(d) (the rotation kernel does it for free);
// the fused kernel applies its own scale. AttentionQueryScale says which.
#pragma once

#include <torch/torch.h>

namespace rung {

enum class AttentionKernel { kAuto, kCpuSlabs, kComposite, kFused, kCpuTiled };

// True when this build has a fused attention kernel (LibTorch >= 2.0).
bool FusedAttentionAvailable();

// The kernel kAuto (or an explicit request) resolves to for tensors of this device and dtype.
AttentionKernel ResolveAttentionKernel(AttentionKernel requested, const torch::Device& device,
                                       torch::ScalarType dtype);

// The factor the caller must fold into q before CausalAttention with this kernel.
double AttentionQueryScale(AttentionKernel kernel, int64_t head_dim);

// doc_start[b, i] = the largest position p <= i with tokens[b, p] == document_start_token, or 0 if
// there is none: the first position of each query's document. tokens: [B, T] int64; returns [B, T]
// int64 on the same device.
torch::Tensor DocumentStarts(const torch::Tensor& tokens, int64_t document_start_token);

// q: [B, heads, T, d] contiguous (times AttentionQueryScale); k, v: [B, kv_heads, T, d]
// contiguous; alibi_slopes: [heads] or undefined; doc_start: [B, T] int64 on q's device
// (DocumentStarts), or undefined for plain causal attention. Query i of row b sees the keys
// doc_start[b, i] <= j <= i. Returns [B, T, heads * d].
// REQUIRES: kernel resolved (not kAuto); 0 <= doc_start[b, i] <= i.
torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& alibi_slopes, const torch::Tensor& doc_start,
                              AttentionKernel kernel);

}  // namespace rung
