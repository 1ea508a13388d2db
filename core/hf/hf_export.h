// core/hf/hf_export.h
//
// A rung model as a Hugging Face model folder (config.json and model.safetensors, each parameter in
// its dtype), the inverse of hf_import.h: importing the folder again computes the same logits.
// Which architecture: Qwen3ForCausalLM where the model has QK-norm, Qwen2ForCausalLM where its q/k/v
// projection has a bias, LlamaForCausalLM otherwise (tie_word_embeddings as model.tie_embeddings,
// head_dim written explicitly). The q and k rows are permuted back to rotate_half's layout
// (rotary_permutation.h).
//
// Refused (FAILED_PRECONDITION, saying why): variants other than rope (transformers' Llama, Qwen2 and
// Qwen3 rotate every pair of a head at b^(-2f/d); LeRoPE's and AdaRoPE's learned frequencies and
// scales, ALiBi's biases and p-RoPE's unrotated pairs have no place in their config.json), an
// inverse-temperature schedule, a GELU MLP (their MLPs are gated), QK-norm with a q/k/v bias.
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
