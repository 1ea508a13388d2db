// core/hf/hf_export.h
//
// A rung model as a Hugging Face model folder (config.json and model.safetensors, each parameter in
// its dtype), the inverse of hf_import.h: importing the folder again computes the same logits.
// Which architecture: Phi3ForCausalLM for p-RoPE (partial_rotary_factor r/d with r = 2 floor(p d/2)
// rotated dimensions, rope_theta b^(r/d), so that its b_hf^(-2f/r) are rung's b^(-2f/d)),
// Qwen3ForCausalLM where the model has QK-norm, Qwen2ForCausalLM where its q/k/v projection has a
// bias, LlamaForCausalLM otherwise (tie_word_embeddings as model.tie_embeddings, head_dim written
// explicitly). The q and k rows are permuted back to rotate_half's layout (rotary_permutation.h).
//
// Refused (FAILED_PRECONDITION, saying why): variants other than rope and prope (LeRoPE's and
// AdaRoPE's learned frequencies and scales, ALiBi's biases, xPos's decay, NoPE and the absolute table
// have no place in these config.json files), p-RoPE with QK-norm, a q/k/v bias or an explicit head_dim
// (Phi-3 has none), an inverse-temperature schedule, a GELU MLP (their MLPs are gated), QK-norm with a
// q/k/v bias.
//
// The folder is written whole or not at all: into a hidden folder beside it, renamed into place;
// an existing non-empty folder is refused (INVALID_ARGUMENT). INTERNAL / RESOURCE_EXHAUSTED for write
// failures.
#pragma once

#include <string>

#include "core/common/status.h"
#include "core/config/model_config.h"
#include "core/model/transformer.h"

namespace rung::hf {

// Whether `config` can be exported, and if not why (the message of ExportHfModel's refusal).
Status CheckExportable(const ModelConfig& config);

Status ExportHfModel(Transformer& model, const std::string& folder);

}  // namespace rung::hf
