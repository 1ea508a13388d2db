// core/model/greedy_decode.h
//
// Greedy decoding from a Transformer (transformer.h), for probes that read a few tokens after a long
// prompt: each step appends the previous step's argmax token (the lowest id among equal maxima) to the
// sequence and takes the argmax of the logits at its last position. Two modes compute the same tokens:
//   kCached         the prompt once (TransformerImpl::CachedHidden into a KvCache, kv_cache.h), then one
//                   token per step over the cached keys and values
//   kFullRecompute  Hidden of the whole sequence at every step (the reference)
// Equal up to rounding (the cached path's attention is the exact composite softmax, the full pass the
// model's kernel), so a near-tie may decode differently. kCached falls back to kFullRecompute where a
// position's tables depend on the window's length, which a cache cannot reproduce
// (PositionalEncodingImpl::TablesIndependentOfLength false): position.variant xpos (its exponents'
// centre floor(T/2)), and adarope with adarope.length sequence and AdaScale or fixed_log (L = T). Every
// length extension is cached as set (its scale is fixed by whoever sets it, dynamic NTK's included);
// there are no document starts, so no per-document factor.
//
// Runs under NoGradGuard in eval mode and restores the model's training mode (also when it throws).
// Throws (c10::Error) where the model's forward does (e.g. position.variant absolute with
// beyond refuse past its table).
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "core/model/transformer.h"

namespace rung {

enum class DecodeMode {
  kCached,         // prefill once, then one token per step (kFullRecompute where the tables need it)
  kFullRecompute,  // a forward of the whole sequence every step
};

// prompt: [B, L] int64, L >= 1, on the model's device; steps >= 0. Returns the [B, steps] int64 tokens
// decoded after it.
torch::Tensor GreedyDecode(Transformer& model, const torch::Tensor& prompt, int64_t steps, DecodeMode mode);

}  // namespace rung
