// core/model/attention.h
//
// Causal multi-head / grouped-query attention over already rotated and scaled queries and keys,
// optionally masked across documents.
//
// The kernels compute the same softmax(q k^T / sqrt(d) - m_h (i - j), s_i <= j <= i) v, where
// s_i = doc_start[b, i] is the first position of query i's document in a packed window (cross-document
// masking, data.cross_doc_mask), or 0 without it:
//   kCpuSlabs   fp32 on CPU: cpu_attention.h (causal blocks, BLAS per slab, one autograd node that
//               keeps P [B, heads, T, T] for its backward)
//   kCpuTiled   fp32 on CPU: tiled_attention.h without a gradient, tiled_attention_training.h with one
//               (FlashAttention's online softmax over key tiles; the backward recomputes P tile by tile
//               from the saved per-row logsumexp; memory grows with T, not T^2)
//   kCpuAuto    fp32 on CPU, whichever of the two pays: kCpuTiled without a gradient, and for training
//               windows of T >= kTiledTrainingMinLength; kCpuSlabs for shorter training windows
//   kComposite  any device and dtype: the g = heads/kv_heads query heads sharing a KV head are
//               stacked along time, so Q K^T is one batched product [B*kv_heads, g*T, d] x
//               [B*kv_heads, d, T] with no copy of K or V per head; CausalSoftmax; one product with V
//   kFused      LibTorch >= 2.0: at::scaled_dot_product_attention (flash kernels on CUDA; ALiBi or
//               the document mask pass an explicit mask, which leaves the flash kernel out)
// kAuto picks kFused on CUDA when available, kCpuAuto for fp32 CPU, else kComposite. kCpuSlabs, when
// asked for explicitly, still runs as kCpuTiled whenever no gradient is needed (evaluation,
// extrapolation, diagnostics: no-grad mode or inputs that do not require one), so only its training
// keeps P; kCpuTiled trains tiled at every length; kComposite is the exact reference.
//
// kTiledTrainingMinLength is a measured contract (2 threads, head_dim 32, 4096 tokens per batch):
// from it on the tiled kernel trains faster in every measurement, because the slab kernel writes and
// rereads a P of T^2 floats per head that no cache holds and, once P of a layer passes glibc's mmap
// threshold, faults it in afresh every step; below it the two are within measurement noise or the slab
// kernel is ahead (P of a short window stays cached and its backward reads P where the tiled one
// recomputes it, one product more), so the incumbent slab kernel keeps short windows. Memory: a tiled
// layer keeps O(B heads T d) for its backward, a slab layer O(B heads T^2). Re-measure with
// rung-bench-profile --attention slabs|tiled before moving the threshold.
//
// ALiBi distances stay i - j and rotary positions stay positions in the window under the document
// mask (document-relative positions are not part of it).
//
// The exact path expects q already multiplied by 1/sqrt(d) (the rotation kernel does it for free);
// the fused kernel applies its own scale. AttentionQueryScale says which.
#pragma once

#include <torch/torch.h>

namespace rung {

enum class AttentionKernel { kAuto, kCpuSlabs, kComposite, kFused, kCpuTiled, kCpuAuto };

// kCpuAuto trains with the tiled kernel from this window length on (see above).
constexpr int64_t kTiledTrainingMinLength = 2048;

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

// The same mask for sliding-window attention (Mistral's sliding_window W): query i sees the keys
// i - W < j <= i, i.e. doc_start[b, i] = max(0, i - W + 1). Returns [batch, T] int64 on `device`.
// (Positions are the window's either way: a forward pass given these starts with neither
// document_key_counts nor a per-document extension attends as transformers' sliding window does.)
torch::Tensor SlidingWindowStarts(int64_t batch, int64_t time, int64_t window, const torch::Device& device);

// q: [B, heads, T, d] contiguous (times AttentionQueryScale); k, v: [B, kv_heads, T, d]
// contiguous; alibi_slopes: [heads] or undefined; doc_start: [B, T] int64 on q's device
// (DocumentStarts), or undefined for plain causal attention. Query i of row b sees the keys
// doc_start[b, i] <= j <= i. Returns [B, T, heads * d].
// REQUIRES: kernel resolved (not kAuto); 0 <= doc_start[b, i] <= i.
torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& alibi_slopes, const torch::Tensor& doc_start,
                              AttentionKernel kernel);

// The last n queries of a causal sequence of T over all its keys (a cached forward's new positions over
// the key cache, kv_cache.h): q [B, heads, n, d] contiguous at positions T - n..T - 1 (times
// AttentionQueryScale(kComposite)); k, v: [B, kv_heads, T, d] contiguous. Query i sees the keys j <= i,
// with ALiBi's -m_h (i - j). kComposite's exact softmax (TrailingCausalSoftmax); no document mask.
// Returns [B, n, heads * d]; for n = T it equals CausalAttention(..., kComposite) without doc_start.
torch::Tensor TrailingCausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                      const torch::Tensor& alibi_slopes);

}  // namespace rung
