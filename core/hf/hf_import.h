// core/hf/hf_import.h
//
// A Hugging Face model folder (config.json and its safetensors: hf_model_config.h, hf_weights.h) as a
// rung Transformer that computes the same function:
//   - the config maps onto model options: d_model = hidden_size, heads, kv_heads, an explicit head_dim,
//     mlp swiglu of intermediate_size, norm_eps = rms_norm_eps, qkv_bias (Qwen2), qk_norm (Qwen3),
//     tie_embeddings, position.variant rope with base = rope_theta, seq_len = the original context;
//     Phi-3's partial_rotary_factor (the first r = head_dim x factor dimensions rotate at
//     rope_theta^(-2f/r)) is p-RoPE with fraction r/d and base rope_theta^(d/r); what rung's model cannot
//     compute is refused naming the key (an o_proj or MLP bias, an activation other than silu, a partial
//     rotary factor in another architecture or with rope_scaling);
//   - every tensor is checked against the shape config.json implies before it is copied, and copied in
//     its stored dtype (BF16, F16 or F32): the model computes in fp32 (Transformer::set_compute_dtype);
//   - Hugging Face rotates the halves of a head (rotate_half: dimension f pairs with f + d/2), rung
//     interleaved pairs (2f, 2f+1): the rows of q_proj and k_proj (and their biases, and Qwen3's
//     q_norm and k_norm) are permuted head by head, rung row 2f <- row f, 2f+1 <- f + d/2, so every
//     q.k product, and so the logits, are unchanged;
//   - gate_proj and up_proj become rung's fused up projection [gate; up], q/k/v its fused qkv (Phi-3's
//     qkv_proj and gate_up_proj are fused already).
// rope_scaling becomes a LengthExtension (ConfiguredExtension) as transformers 4.5x computes it:
//   linear   pi, s = factor
//   dynamic  dynamic_ntk at s = factor T / L - (factor - 1) when a window of T > L =
//            max_position_embeddings tokens is evaluated, else none
//   yarn     yarn_hf at s = factor over L = max_position_embeddings; where rope_scaling names
//            original_max_position_embeddings, L is that and s = max_position_embeddings / L (the rule
//            of transformers 4.5x, since changed upstream); attention factor as given, else
//            mscale-ratio or 0.1 ln s + 1
//   llama3   llama3 at s = factor over original_max_position_embeddings, low/high_freq_factor
//
// Errors: NOT_FOUND (no config.json or weights), INVALID_ARGUMENT (config.json), FAILED_PRECONDITION
// (an architecture option rung cannot compute), DATA_LOSS (a tensor missing, of another shape, or of
// an unsupported dtype; the message names the file and the tensor).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/common/status.h"
#include "core/config/model_config.h"
#include "core/hf/hf_model_config.h"
#include "core/hf/hf_model_options.h"
#include "core/model/length_extension.h"
#include "core/model/transformer.h"

namespace rung::hf {

struct ImportedModel {
  HfModelConfig hf;
  ModelConfig config;  // resolved and validated
  Transformer model{nullptr};
};

// Reads the folder and builds the model (CPU).
StatusOr<ImportedModel> ImportHfModel(const std::string& folder);

// The extension the folder's rope_scaling applies to a window of `seq_len` tokens.
LengthExtension ConfiguredExtension(const HfModelConfig& hf, int64_t seq_len);

}  // namespace rung::hf
