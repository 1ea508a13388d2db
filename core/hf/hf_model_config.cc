#include "core/hf/hf_model_config.h"

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"
#include "core/hf/json_keys.h"

namespace rung::hf {
namespace {

using nlohmann::json;

// The class defaults of the keys save_pretrained may leave out, per architecture.
struct Defaults {
  HfArchitecture architecture;
  const char* name;
  const char* model_type;
  int64_t vocab_size, hidden_size, intermediate_size, layers, heads;
  int64_t kv_heads;  // 0: as heads
  int64_t head_dim;  // 0: hidden_size / heads
  int64_t max_position_embeddings;
  std::optional<int64_t> bos, eos;
};
const Defaults kDefaults[] = {
    {HfArchitecture::kLlama, "LlamaForCausalLM", "llama", 32000, 4096, 11008, 32, 32, 0, 0, 2048, 1, 2},
    {HfArchitecture::kMistral, "MistralForCausalLM", "mistral", 32000, 4096, 14336, 32, 32, 8, 0, 131072, 1, 2},
    {HfArchitecture::kQwen2, "Qwen2ForCausalLM", "qwen2", 151936, 4096, 22016, 32, 32, 32, 0, 32768, std::nullopt,
     std::nullopt},
    {HfArchitecture::kQwen3, "Qwen3ForCausalLM", "qwen3", 151936, 4096, 22016, 32, 32, 32, 128, 32768, std::nullopt,
     std::nullopt},
    {HfArchitecture::kPhi3, "Phi3ForCausalLM", "phi3", 32064, 3072, 8192, 32, 32, 0, 0, 4096, 1, 32000},
};


StatusOr<HfRopeScaling> ParseRopeScaling(const json& value, const std::string& source) {
  HfRopeScaling scaling;
  if (value.is_null()) return scaling;
  const std::string supported = "(none, default, linear, dynamic, yarn, llama3)";
  if (!value.is_object()) {
    return Status::InvalidArgument(source + ": key 'rope_scaling': " + value.dump() + " is not an object");
  }
  const JsonKeys keys(value, source + ": in 'rope_scaling'");
  RUNG_ASSIGN_OR_RETURN(std::string type, keys.String("rope_type", ""));
  if (type.empty()) {
    RUNG_ASSIGN_OR_RETURN(type, keys.String("type", "default"));
  }
  if (type != "default" && type != "linear" && type != "dynamic" && type != "yarn" && type != "llama3") {
    return Status::InvalidArgument(source + ": key 'rope_scaling': rope_type '" + type + "' is not supported " +
                                   supported);
  }
  scaling.type = type;
  if (type == "default") return scaling;
  if (!value.contains("factor")) return keys.Error("factor", "missing: rope_type '" + type + "' needs it");
  RUNG_ASSIGN_OR_RETURN(scaling.factor, keys.Number("factor", 1.0, 1e-3, 1e6));
  RUNG_ASSIGN_OR_RETURN(int64_t original, keys.Positive("original_max_position_embeddings", 0));
  if (original > 0) scaling.original_max_position_embeddings = original;
  if (type == "yarn") {
    RUNG_ASSIGN_OR_RETURN(scaling.beta_fast, keys.Number("beta_fast", 32.0, 1e-6, 1e6));
    RUNG_ASSIGN_OR_RETURN(scaling.beta_slow, keys.Number("beta_slow", 1.0, 1e-6, 1e6));
    RUNG_ASSIGN_OR_RETURN(scaling.attention_factor, keys.OptionalNumber("attention_factor", 1e-6, 1e6));
    RUNG_ASSIGN_OR_RETURN(scaling.mscale, keys.OptionalNumber("mscale", 0, 1e6));
    RUNG_ASSIGN_OR_RETURN(scaling.mscale_all_dim, keys.OptionalNumber("mscale_all_dim", 0, 1e6));
    RUNG_ASSIGN_OR_RETURN(scaling.truncate, keys.Flag("truncate", true));
  }
  if (type == "llama3") {
    RUNG_ASSIGN_OR_RETURN(scaling.low_freq_factor, keys.Number("low_freq_factor", 1.0, 1e-6, 1e6));
    RUNG_ASSIGN_OR_RETURN(scaling.high_freq_factor, keys.Number("high_freq_factor", 4.0, 1e-6, 1e6));
    if (!scaling.original_max_position_embeddings) {
      return keys.Error("original_max_position_embeddings", "missing: rope_type 'llama3' needs it");
    }
    if (!(scaling.high_freq_factor > scaling.low_freq_factor)) {
      return keys.Error("high_freq_factor", "must be above low_freq_factor");
    }
  }
  return scaling;
}

}  // namespace

const char* HfArchitectureName(HfArchitecture architecture) {
  for (const Defaults& defaults : kDefaults) {
    if (defaults.architecture == architecture) return defaults.name;
  }
  return "?";
}

int64_t HfModelConfig::RotaryDims() const {
  const int64_t dims = static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary_factor);
  return dims - dims % 2;
}

StatusOr<HfModelConfig> ParseHfModelConfig(std::string_view text, const std::string& source) {
  RUNG_ASSIGN_OR_RETURN(const json config, ParseJson(text, source));
  if (!config.is_object()) return Status::InvalidArgument(source + ": not a JSON object");
  const JsonKeys keys(config, source);
  std::string supported;
  for (const Defaults& defaults : kDefaults) supported += (supported.empty() ? "" : ", ") + std::string(defaults.name);
  const auto architectures = config.find("architectures");
  if (architectures == config.end() || !architectures->is_array() || architectures->size() != 1 ||
      !(*architectures)[0].is_string()) {
    return keys.Error("architectures", "must name one architecture (" + supported + ")");
  }
  const std::string name = (*architectures)[0].get<std::string>();
  const Defaults* defaults = nullptr;
  for (const Defaults& candidate : kDefaults) {
    if (name == candidate.name) defaults = &candidate;
  }
  if (defaults == nullptr) return keys.Error("architectures", "'" + name + "' is not supported (" + supported + ")");
  HfModelConfig out;
  out.architecture = defaults->architecture;
  RUNG_ASSIGN_OR_RETURN(out.model_type, keys.String("model_type", defaults->model_type));
  RUNG_ASSIGN_OR_RETURN(out.vocab_size, keys.Positive("vocab_size", defaults->vocab_size));
  RUNG_ASSIGN_OR_RETURN(out.hidden_size, keys.Positive("hidden_size", defaults->hidden_size));
  RUNG_ASSIGN_OR_RETURN(out.intermediate_size, keys.Positive("intermediate_size", defaults->intermediate_size));
  RUNG_ASSIGN_OR_RETURN(out.num_hidden_layers, keys.Positive("num_hidden_layers", defaults->layers));
  RUNG_ASSIGN_OR_RETURN(out.num_attention_heads, keys.Positive("num_attention_heads", defaults->heads));
  RUNG_ASSIGN_OR_RETURN(out.num_key_value_heads,
                        keys.Positive("num_key_value_heads", defaults->kv_heads > 0 ? defaults->kv_heads
                                                                                    : out.num_attention_heads));
  if (out.num_attention_heads % out.num_key_value_heads != 0) {
    return keys.Error("num_key_value_heads", std::to_string(out.num_key_value_heads) + " does not divide the " +
                                                 std::to_string(out.num_attention_heads) + " attention heads");
  }
  RUNG_ASSIGN_OR_RETURN(out.head_dim, keys.Positive("head_dim", defaults->head_dim > 0
                                                                    ? defaults->head_dim
                                                                    : out.hidden_size / out.num_attention_heads));
  if (out.head_dim <= 0 || out.head_dim % 2 != 0) {
    return keys.Error("head_dim", std::to_string(out.head_dim) + " is not a positive even number (RoPE rotates pairs)");
  }
  RUNG_ASSIGN_OR_RETURN(out.hidden_act, keys.String("hidden_act", "silu"));
  if (out.hidden_act != "silu") return keys.Error("hidden_act", "'" + out.hidden_act + "' is not supported (silu)");
  RUNG_ASSIGN_OR_RETURN(out.rms_norm_eps, keys.Number("rms_norm_eps", 1e-6, 0.0, 1.0));
  RUNG_ASSIGN_OR_RETURN(out.rope_theta, keys.Number("rope_theta", 10000.0, 1.0 + 1e-9, 1e300));
  RUNG_ASSIGN_OR_RETURN(out.partial_rotary_factor, keys.Number("partial_rotary_factor", 1.0, 1e-9, 1.0));
  if (out.RotaryDims() < 2) return keys.Error("partial_rotary_factor", "leaves no rotary pair");
  RUNG_ASSIGN_OR_RETURN(out.max_position_embeddings,
                        keys.Positive("max_position_embeddings", defaults->max_position_embeddings));
  RUNG_ASSIGN_OR_RETURN(out.tie_word_embeddings, keys.Flag("tie_word_embeddings", false));
  const auto scaling = config.find("rope_scaling");
  if (scaling != config.end()) {
    RUNG_ASSIGN_OR_RETURN(out.rope_scaling, ParseRopeScaling(*scaling, source));
  }
  switch (out.architecture) {
    case HfArchitecture::kLlama: {
      RUNG_ASSIGN_OR_RETURN(out.attention_bias, keys.Flag("attention_bias", false));
      RUNG_ASSIGN_OR_RETURN(out.mlp_bias, keys.Flag("mlp_bias", false));
      out.qkv_bias = out.output_bias = out.attention_bias;
      break;
    }
    case HfArchitecture::kPhi3:  // sliding_window null by default (Phi-3-mini's configs set 2047)
    case HfArchitecture::kMistral: {
      RUNG_ASSIGN_OR_RETURN(int64_t window,
                            keys.Positive("sliding_window", out.architecture == HfArchitecture::kMistral ? 4096 : 0));
      if (config.contains("sliding_window") && config.at("sliding_window").is_null()) window = 0;
      if (window > 0) out.sliding_window = window;
      break;
    }
    case HfArchitecture::kQwen2:
    case HfArchitecture::kQwen3: {
      if (out.architecture == HfArchitecture::kQwen2) {
        out.qkv_bias = true;
      } else {
        RUNG_ASSIGN_OR_RETURN(out.attention_bias, keys.Flag("attention_bias", false));
        out.qkv_bias = out.output_bias = out.attention_bias;
        out.qk_norm = true;
      }
      RUNG_ASSIGN_OR_RETURN(bool sliding, keys.Flag("use_sliding_window", false));
      if (sliding) {
        RUNG_ASSIGN_OR_RETURN(int64_t window, keys.Positive("sliding_window", 4096));
        out.sliding_window = window;
      }
      break;
    }
  }
  const auto bos = config.find("bos_token_id");
  if (bos == config.end()) {
    if (defaults->bos && *defaults->bos < out.vocab_size) out.bos_token_id = defaults->bos;
  } else if (!bos->is_null()) {
    if (!bos->is_number_integer() || bos->get<int64_t>() < 0) return keys.Error("bos_token_id", bos->dump() + " is not a token id");
    out.bos_token_id = bos->get<int64_t>();
  }
  // A key left out takes the class default (where it is an id of this vocabulary); null is none.
  const auto eos = config.find("eos_token_id");
  if (eos == config.end()) {
    if (defaults->eos && *defaults->eos < out.vocab_size) out.eos_token_ids.push_back(*defaults->eos);
  } else if (!eos->is_null()) {
    const json list = eos->is_array() ? *eos : json::array({*eos});
    for (const json& id : list) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0) return keys.Error("eos_token_id", eos->dump() + " is not a token id or a list of them");
      out.eos_token_ids.push_back(id.get<int64_t>());
    }
  }
  for (int64_t id : out.eos_token_ids) {
    if (id >= out.vocab_size) return keys.Error("eos_token_id", std::to_string(id) + " is outside the vocabulary");
  }
  if (out.bos_token_id && *out.bos_token_id >= out.vocab_size) {
    return keys.Error("bos_token_id", std::to_string(*out.bos_token_id) + " is outside the vocabulary");
  }
  RUNG_ASSIGN_OR_RETURN(out.torch_dtype, keys.String("torch_dtype", ""));
  return out;
}

StatusOr<HfModelConfig> ReadHfModelConfig(const std::string& folder) {
  const std::string path = folder + "/config.json";
  std::string text;
  if (Status read = ReadFileBytes(path, "model config", &text); !read.ok()) {
    return Status(read.code(), read.message() + " (a Hugging Face model folder holds config.json)");
  }
  return ParseHfModelConfig(text, path);
}

}  // namespace rung::hf
