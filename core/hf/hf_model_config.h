// core/hf/hf_model_config.h
//
// A Hugging Face model folder's config.json, read for the architectures rung imports: its shape, its
// rotary embedding (rope_theta, partial_rotary_factor and rope_scaling) and the options that set the
// architectures apart. Keys the file leaves out take the architecture's class defaults, as
// transformers' save_pretrained omits values equal to them:
//
//   architecture          projection biases        q/k norm  tied head  sliding window        defaults of
//   LlamaForCausalLM      attention_bias, mlp_bias  no        as config  no                    LlamaConfig
//   MistralForCausalLM    none                      no        as config  sliding_window (4096)  MistralConfig
//   Qwen2ForCausalLM      q, k, v                   no        as config  if use_sliding_window  Qwen2Config
//   Qwen3ForCausalLM      attention_bias            per head  as config  if use_sliding_window  Qwen3Config
//   Phi3ForCausalLM       none (fused qkv_proj,     no        as config  sliding_window (none)  Phi3Config
//                         gate_up_proj)
// (SmolLM and SmolLM2 are LlamaForCausalLM with tie_word_embeddings true.)
//
// rope_scaling (its "rope_type", or the older "type"): none/"default", "linear" {factor}, "dynamic"
// {factor}, "yarn" {factor, original_max_position_embeddings, beta_fast 32, beta_slow 1,
// attention_factor, mscale, mscale_all_dim, truncate}, "llama3" {factor, low_freq_factor, high_freq_factor,
// original_max_position_embeddings}. Anything else is refused by name, listing these.
//
// Errors are INVALID_ARGUMENT naming the file and the key: "m/config.json: key 'rope_scaling':
// rope_type 'longrope' is not supported (none, default, linear, dynamic, yarn, llama3)".
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace rung::hf {

enum class HfArchitecture { kLlama, kMistral, kQwen2, kQwen3, kPhi3 };
const char* HfArchitectureName(HfArchitecture architecture);  // "LlamaForCausalLM", ...

struct HfRopeScaling {
  std::string type = "default";  // default | linear | dynamic | yarn | llama3
  double factor = 1.0;
  std::optional<int64_t> original_max_position_embeddings;
  // yarn
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  std::optional<double> attention_factor;
  std::optional<double> mscale;
  std::optional<double> mscale_all_dim;
  bool truncate = true;
  // llama3
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
};

struct HfModelConfig {
  HfArchitecture architecture = HfArchitecture::kLlama;
  std::string model_type;  // "llama", "mistral", "qwen2", "qwen3"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;  // explicit, or hidden_size / num_attention_heads
  std::string hidden_act = "silu";
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  double partial_rotary_factor = 1.0;
  HfRopeScaling rope_scaling;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q, k, v and o projections (Llama, Qwen3); Qwen2: q, k, v always
  bool qkv_bias = false;        // the q, k and v projections carry biases
  bool output_bias = false;     // the o projection carries a bias
  bool mlp_bias = false;
  bool qk_norm = false;         // Qwen3: RMSNorm of each head's q and k before the rotation
  std::optional<int64_t> sliding_window;  // attention sees this many keys back, where the model uses it
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;
  std::string torch_dtype;      // as stored ("bfloat16", ...); "" when absent

  // The rotary dimensions of a head: head_dim x partial_rotary_factor, even.
  int64_t RotaryDims() const;
};

// Parses config.json's text; `source` names it in messages.
StatusOr<HfModelConfig> ParseHfModelConfig(std::string_view text, const std::string& source);

// Reads and parses FOLDER/config.json. NOT_FOUND when there is none.
StatusOr<HfModelConfig> ReadHfModelConfig(const std::string& folder);

}  // namespace rung::hf
