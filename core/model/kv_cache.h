// core/model/kv_cache.h
//
// The keys and values a cached forward (TransformerImpl::CachedHidden, transformer.h) has computed for
// positions 0..P-1 of one sequence, per layer as attention consumes them: keys after QK-norm and the
// rotation by their positions' (key) tables, values as projected, both [B, kv_heads, P, head_dim] in the
// forward's compute dtype. A forward over the next n tokens appends theirs to every layer (Append) and
// then counts them (positions += n); an empty cache (KvCache{}) starts a sequence at position 0.
//
// Contract: a cache belongs to one model, one batch of sequences and one device, and only its forward
// extends it; a forward that throws leaves it unusable. Growing it copies every cached row (torch::cat):
// meant for a few steps after a long prompt, not for long generation.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace rung {

struct KvCache {
  std::vector<torch::Tensor> keys;    // per layer [B, kv_heads, P, d]; empty before the first forward
  std::vector<torch::Tensor> values;  // per layer [B, kv_heads, P, d]
  int64_t positions = 0;              // P: the positions cached in every layer

  // Layer `layer`'s keys and values with k, v [B, kv_heads, n, d] after the cached ones (the first append
  // to a layer starts it): [B, kv_heads, P + n, d] each, contiguous, kept as the layer's. Leaves
  // `positions` to the forward, which appends to every layer before it counts the new positions.
  std::pair<torch::Tensor, torch::Tensor> Append(int64_t layer, const torch::Tensor& k, const torch::Tensor& v);
};

}  // namespace rung
