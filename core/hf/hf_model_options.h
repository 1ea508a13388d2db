// core/hf/hf_model_options.h
//
// A Hugging Face folder's config.json as rung's model options, without LibTorch (hf_import.h builds the
// model; sweeps/ and the coordinator read the options, so that an evaluation or continued training of
// a folder can take its model block from the folder: train.init.model: checkpoint). The mapping is
// hf_import.h's: d_model = hidden_size, heads, kv_heads, an explicit head_dim, a SwiGLU MLP of
// intermediate_size, norm_eps = rms_norm_eps, qkv_bias (Qwen2), qk_norm (Qwen3), tie_embeddings,
// RoPE at rope_theta (Phi-3's partial rotary factor as p-RoPE); what rung cannot compute is refused.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/config/model_config.h"
#include "core/hf/hf_model_config.h"

namespace rung::hf {

// The rung model options of `hf` (resolved). FAILED_PRECONDITION for what rung cannot compute.
StatusOr<ModelConfig> ModelConfigFromHf(const HfModelConfig& hf, const std::string& source);

// The context the model was trained at before any rope_scaling (the length extensions' L).
int64_t OriginalContext(const HfModelConfig& hf);

// Whether a trial (train.init.checkpoint) can run the folder's model: a trial sets its own length
// extension per evaluation (train.extrapolation_methods), so a folder whose rope_scaling changes the
// frequencies at every length (linear, yarn, llama3) would run as another function. FAILED_PRECONDITION
// for those, naming the type and what evaluates the folder as configured (rung eval); default and
// dynamic (which changes nothing within max_position_embeddings) are fine.
Status CheckTrialCanRunFolder(const HfModelConfig& hf, const std::string& source);

// Whether `folder` looks like a Hugging Face model folder (it holds config.json).
bool IsHfModelFolder(const std::string& folder);

// The trial-config keys of the folder's model ("model.layers", ..., "position.variant", "position.base",
// and "position.fraction" for p-RoPE) with the folder's values: what a spec would write to describe it,
// for a trial config whose `position` block (JSON as written; null where none) is `position`. Where that
// block names a variant other than RoPE that starts as RoPE (PositionalVariant::StartsAsRope) and the
// folder is RoPE, "position.variant" is left out: the trial keeps its variant, converted at
// initialisation. Errors: ReadHfModelConfig's, ModelConfigFromHf's and CheckTrialCanRunFolder's.
StatusOr<std::vector<std::pair<std::string, nlohmann::json>>> HfFolderModelKeys(const std::string& folder,
                                                                                const nlohmann::json& position);

}  // namespace rung::hf
