// core/model/rotary.h
//
// The rotation of docs/science.md section 1 as one autograd operation that also moves heads ahead of
// time (the layout attention wants) and applies an optional per-(position, head) query multiplier:
//
//   out[b, h, t, 2f]   = c * scale[t, h] * ( x[b,t,h,2f] * cos[t,g,f] - x[b,t,h,2f+1] * sin[t,g,f] )
//   out[b, h, t, 2f+1] = c * scale[t, h] * ( x[b,t,h,2f] * sin[t,g,f] + x[b,t,h,2f+1] * cos[t,g,f] )
//
// (c a constant: attention folds its 1/sqrt(d) into the queries here, for free).
//
// with g = h / (heads / G) the table's group for head h (G = 1: one table for every head).
// Gradients flow to x, and to cos, sin and scale when they require grad (learned frequencies,
// AdaScale, learned inverse temperature). cos/sin are fp32 whatever x's dtype.
//
// Two implementations with the same contract: a fused CPU kernel for contiguous-last-dim fp32 input
// and a composite of ATen ops for everything else (CUDA, bf16); RotaryImplementation selects one
// explicitly for tests.
#pragma once

#include <torch/torch.h>

namespace rung {

enum class RotaryImplementation { kAuto, kFusedCpu, kComposite };

// x: [B, T, heads, d] (last dim contiguous). cos, sin: [T, G, d/2] fp32, or [B, T, G, d/2] (a table per
// sequence: per-document length extension; always the composite path), or undefined for no rotation (both). scale: [T, heads] or undefined (1). Returns [B, heads, T, d], contiguous.
torch::Tensor RotateAndTranspose(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                 const torch::Tensor& scale, double constant = 1.0,
                                 RotaryImplementation implementation = RotaryImplementation::kAuto);

// The three RotateAndTranspose calls of attention's inputs on the fused q/k/v projection at once:
// qkv [B, T, heads + 2 kv_heads, d] (its parts in that order) ->
//   q = RotateAndTranspose(q part, cos, sin, scale, constant)           [B, heads, T, d]
//   k = RotateAndTranspose(k part, key_cos, key_sin) (cos, sin when the key tables are undefined)
//   v = the v part transposed                                           [B, kv_heads, T, d]
// On contiguous fp32 CPU input with tables [T, G, d/2] a fused kernel computes all three, and in the
// backward writes the projection's whole gradient in one buffer, where three calls on slices leave
// autograd to zero-fill a projection-sized gradient per slice, copy each in, and add the three.
// Everything else makes the three calls (kFusedCpu where the fused kernel cannot apply: an error).
struct RotatedHeads {
  torch::Tensor q, k, v;
};
RotatedHeads RotateQkvAndTranspose(const torch::Tensor& qkv, int64_t heads, const torch::Tensor& cos,
                                   const torch::Tensor& sin, const torch::Tensor& key_cos, const torch::Tensor& key_sin,
                                   const torch::Tensor& scale, double constant = 1.0,
                                   RotaryImplementation implementation = RotaryImplementation::kAuto);

}  // namespace rung
