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

// [d] long: rung dimension j takes Hugging Face dimension HfToRungRotaryRows(d)[j] (2f <- f, 2f+1 <- f + d/2).
torch::Tensor HfToRungRotaryRows(int64_t head_dim);
// [d] long: the inverse (Hugging Face dimension f <- rung 2f, f + d/2 <- rung 2f + 1).
torch::Tensor RungToHfRotaryRows(int64_t head_dim);

// `rows_of_heads` ([heads * d, ...] or [heads * d]) with each head's d rows reordered by `order`.
torch::Tensor PermuteHeadRows(const torch::Tensor& rows_of_heads, int64_t heads, const torch::Tensor& order);

}  // namespace rung::hf
