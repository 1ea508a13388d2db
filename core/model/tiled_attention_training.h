// core/model/tiled_attention_training.h
//
// Causal attention on CPU for training without a T x T matrix: FlashAttention's forward and backward as
// one autograd operation. The forward is tiled_attention.h's, which also yields each query row's
// logsumexp L_i = log sum_j exp(S_ij); the node keeps q, k, v, the output O and L ([B, heads, T]), so
// what training holds per layer grows with T, not T^2 (the slab kernel, cpu_attention.h, keeps
// P [B, heads, T, T]).
//
// The backward runs per slab (one batch entry and KV head, with the g query heads that share it), one
// thread per slab, so the dK and dV of a KV head are written by a single thread. Per query head, block of
// query rows [r0, r1) and key tile [c0, c0 + w) the block can see (tiles above the diagonal, and before
// every row's document start, are skipped as in the forward):
//   S = Q_blk K_tile^T, ALiBi and masks       (attention_tile.h: the forward's own scores)
//   P = exp(S - L)                            (0 where hidden)
//   dV_tile += P^T dO_blk
//   dP = dO_blk V_tile^T
//   dS = P (dP - D), D_i = sum_c dO_ic O_ic   (rowsum(P dP) without P's row)
//   dQ_blk += dS K_tile,  dK_tile += dS^T Q_blk
// five single-threaded sgemm calls on blocks that stay in cache; per-thread scratch is two score tiles,
// whatever T. The gradient is q's, which already carries 1/sqrt(d); ALiBi slopes and document starts
// get none.
//
// Requires fp32 CPU tensors and sgemm_ (TiledAttentionAvailable(), tiled_attention.h).
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace rung {

// As TiledCausalAttention (tiled_attention.h), differentiable in q, k and v: q [B, heads, T, d]; k, v
// [B, kv_heads, T, d] (contiguous fp32 CPU); alibi_slopes [heads] or undefined; doc_start [B, T] int64
// with 0 <= doc_start[b, i] <= i (checked), or undefined. Returns [B, T, heads * d].
at::Tensor TiledCausalAttentionTraining(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                        const at::Tensor& alibi_slopes, const at::Tensor& doc_start);

// The tensors the autograd node behind `out` (an output of TiledCausalAttentionTraining whose graph has
// not been freed by a backward) keeps for its backward; empty for any other tensor. For memory checks.
std::vector<at::Tensor> TiledAttentionSavedTensors(const at::Tensor& out);

}  // namespace rung
