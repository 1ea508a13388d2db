// core/hf/rotary_permutation.h
//
// Hugging Face's rotary layout (rotate_half: dimension f of a head pairs with f + d/2, both at
// frequency f) against rung's (interleaved: 2f pairs with 2f + 1): the one permutation between them,
// used by the import and the export. Permuting the rows of q and k the same way leaves every q.k
// product unchanged, so a model with permuted rows computes the same function in the other layout.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace rung::hf {

// With a partial rotary factor (Phi-3's partial_rotary_factor) Hugging Face rotates the first r
// dimensions of a head (f with f + r/2, f < r/2) and passes the other d - r through; rung rotates its
// first r/2 pairs (p-RoPE) and leaves the rest: pair f >= r/2 takes dimensions r + 2(f - r/2) and the
// one after, in order.
//
// [d] long: rung dimension j takes Hugging Face dimension HfToRungRotaryRows(d, r)[j]
// (2f <- f, 2f+1 <- f + r/2 for f < r/2; 2f <- 2f, 2f+1 <- 2f+1 beyond). rotary_dims 0 = head_dim.
torch::Tensor HfToRungRotaryRows(int64_t head_dim, int64_t rotary_dims = 0);
// [d] long: the inverse.
torch::Tensor RungToHfRotaryRows(int64_t head_dim, int64_t rotary_dims = 0);

// `rows_of_heads` ([heads * d, ...] or [heads * d]) with each head's d rows reordered by `order`.
torch::Tensor PermuteHeadRows(const torch::Tensor& rows_of_heads, int64_t heads, const torch::Tensor& order);

}  // namespace rung::hf
