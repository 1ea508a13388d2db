// core/model/tiled_attention.h
//
// Causal attention on CPU that never holds a T x T matrix: the forward pass of FlashAttention's tiled
// recurrence. Memory beyond q, k, v and the output is one score tile per thread, whatever T. Without a
// gradient (evaluation, extrapolation, diagnostics) TiledCausalAttention is the whole kernel; training
// runs the same forward inside tiled_attention_training.h, which also keeps each row's logsumexp.
//
// For each query head h and block of query rows [r0, r1) (kQueryBlock rows), the keys the block can see,
// [min_i s_i, r1), are read in tiles of kKeyTile keys; per tile (attention_tile.h scores it)
//   S = Q_blk K_tile^T                                    (one sgemm; q carries 1/sqrt(d) and any multiplier)
//   S_ij += m_h (j - i) (ALiBi), S_ij hidden where j > i or j < s_i
//   m_i' = max(m_i, max_j S_ij), P_ij = exp(S_ij - m_i'), l_i = l_i exp(m_i - m_i') + sum_j P_ij
//   O_i = O_i exp(m_i - m_i') + P V_tile                  (one sgemm into the output rows)
// and finally O_i /= l_i (and L_i = m_i + log l_i): softmax(S) V exactly, up to float rounding (the same
// softmax the slab kernel and the composite path compute; the tests compare them). s_i = doc_start[b, i],
// or 0 without cross-document masking. Key tiles wholly before every row's document start are skipped.
//
// Work is shared among the intra-op threads by (batch, head, query block), interleaved so that the short
// early blocks and the long late ones of the causal triangle spread evenly.
//
// Requires fp32 CPU tensors and sgemm_ (TiledAttentionAvailable()).
#pragma once

#include <ATen/ATen.h>

#include "core/model/cpu_attention_inputs.h"

namespace rung {

bool TiledAttentionAvailable();

// q: [B, heads, T, d]; k, v: [B, kv_heads, T, d] (contiguous fp32 CPU, heads a multiple of kv_heads);
// alibi_slopes: [heads] or undefined; doc_start: [B, T] int64 with 0 <= doc_start[b, i] <= i (checked),
// or undefined; as CausalAttention (attention.h). Returns [B, T, heads * d]. Refuses inputs that require
// a gradient: those take TiledCausalAttentionTraining (tiled_attention_training.h).
at::Tensor TiledCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const at::Tensor& alibi_slopes, const at::Tensor& doc_start);

// The forward pass on checked inputs, whatever their requires_grad (reads the data only): returns
// O [B, T, heads * d]; when `logsumexp` is given, sets it to L [B, heads, T] fp32, L_bhi = log sum_j
// exp(S_ij) over row i's visible keys, which is all the backward needs to recompute P = exp(S - L).
// REQUIRES: TiledAttentionAvailable().
at::Tensor TiledAttentionForward(const CpuAttentionInputs& inputs, at::Tensor* logsumexp);

}  // namespace rung
