// core/model/cpu_attention.h
//
// Causal attention on CPU as one autograd operation over "slabs" (one batch entry and KV head,
// with the g query heads that share it), each handled by one thread with single-threaded BLAS calls
// on blocks that stay in cache:
//   forward   S = Q K^T over causal row blocks only (row block [r0, r1) meets keys [0, r1)),
//             P = softmax(S - m_h (i - j), s_i <= j <= i) in place (zeros elsewhere in the block;
//             s_i = doc_start[b, i], or 0), O = P V written straight into the [B, T, heads * d]
//             layout the output projection reads
//   backward  dP = dO V^T, dS = P (dP - rowsum(P dP)), dQ = dS K, dK += dS^T Q, dV += P^T dO,
//             over the same blocks
// The causal blocks skip most of the upper triangle (about 37% of the products at T = 256), and the
// batched products avoid ATen's per-matrix BLAS dispatch, which dominates at small head dimensions.
// The document mask changes only the softmax rows: the products keep their causal blocks and meet
// zeros of P, and of dS, before a query's document.
// P is kept for the backward ([B, heads, T, T], as the composite path keeps it).
//
// Requires fp32 CPU tensors and a BLAS exporting sgemm_ (Debian's LibTorch); CpuAttentionAvailable()
// says whether this build has it. q must already carry the 1/sqrt(d) factor.
#pragma once

#include <torch/torch.h>

namespace rung {

bool CpuAttentionAvailable();

// q: [B, heads, T, d]; k, v: [B, kv_heads, T, d] (contiguous fp32 CPU); alibi_slopes: [heads] or
// undefined; doc_start: [B, T] int64 or undefined, as CausalAttention (attention.h) takes them;
// checked: 0 <= doc_start[b, i] <= i. Returns [B, T, heads * d].
torch::Tensor CpuCausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& alibi_slopes, const torch::Tensor& doc_start);

}  // namespace rung
