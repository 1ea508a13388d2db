#include "core/hf/hf_model_options.h"

#include "core/config/positional_variant.h"

#include <sys/stat.h>

#include <cmath>
#include <vector>

namespace rung::hf {

int64_t OriginalContext(const HfModelConfig& hf) {
  const HfRopeScaling& scaling = hf.rope_scaling;
  if ((scaling.type == "yarn" || scaling.type == "llama3") && scaling.original_max_position_embeddings) {
    return *scaling.original_max_position_embeddings;
  }
  return hf.max_position_embeddings;
}

StatusOr<ModelConfig> ModelConfigFromHf(const HfModelConfig& hf, const std::string& source) {
  auto refuse = [&](const std::string& what) {
    return Status::FailedPrecondition(source + ": " + what + " (" + HfArchitectureName(hf.architecture) +
                                      " is imported without it)");
  };
  if (hf.output_bias) return refuse("attention_bias true: rung's model has no o_proj bias");
  if (hf.mlp_bias) return refuse("mlp_bias true: rung's model has no MLP biases");
  const int64_t rotary_dims = hf.RotaryDims();
  const bool partial = rotary_dims < hf.head_dim;
  if (partial && hf.architecture != HfArchitecture::kPhi3) {
    return refuse("partial_rotary_factor " + std::to_string(hf.partial_rotary_factor) +
                  ": this architecture rotates whole heads in transformers");
  }
  if (partial && hf.rope_scaling.type != "default") {
    return refuse("rope_scaling '" + hf.rope_scaling.type + "' with a partial_rotary_factor below 1");
  }
  ModelConfig config;
  config.vocab_size = hf.vocab_size;
  config.layers = hf.num_hidden_layers;
  config.d_model = hf.hidden_size;
  config.heads = hf.num_attention_heads;
  config.kv_heads = hf.num_key_value_heads;
  config.head_dim = hf.head_dim;
  config.mlp = "swiglu";
  config.mlp_hidden = hf.intermediate_size;
  config.qk_norm = hf.qk_norm;
  config.norm_eps = hf.rms_norm_eps;
  config.qkv_bias = hf.qkv_bias;
  config.tie_embeddings = hf.tie_word_embeddings;
  config.seq_len = OriginalContext(hf);
  config.position.variant = "rope";
  config.position.base = hf.rope_theta;
  if (partial) {
    // transformers rotates the first r = head_dim x factor dimensions at b_hf^(-2f/r), f < r/2: rung's
    // p-RoPE rotates its first floor(p d/2) pairs at b^(-2f/d), so p = r/d and b = b_hf^(d/r).
    const double pairs = static_cast<double>(hf.head_dim / 2);
    double fraction = static_cast<double>(rotary_dims) / static_cast<double>(hf.head_dim);
    while (static_cast<int64_t>(std::floor(fraction * pairs)) < rotary_dims / 2) fraction = std::nextafter(fraction, 2.0);
    config.position.variant = "prope";
    config.position.fraction = fraction;
    config.position.base = std::pow(hf.rope_theta, static_cast<double>(hf.head_dim) / static_cast<double>(rotary_dims));
  }
  ResolveModelConfig(&config);
  std::vector<ConfigError> errors;
  ValidateModelConfig(config, &errors);
  if (!errors.empty()) {
    return Status::InvalidArgument(source + ": the model it describes is not one rung can build: " + errors[0].path +
                                   " " + errors[0].message);
  }
  return config;
}

bool IsHfModelFolder(const std::string& folder) {
  struct stat info {};
  return ::stat((folder + "/config.json").c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

Status CheckTrialCanRunFolder(const HfModelConfig& hf, const std::string& source) {
  const std::string& type = hf.rope_scaling.type;
  if (type == "default" || type == "dynamic") return Status::Ok();
  return Status::FailedPrecondition(
      source + " has rope_scaling '" + type + "', which changes the rotary frequencies at every length; a trial "
      "sets its own extension per evaluation (train.extrapolation_methods), so it would run the weights as "
      "another model. rung eval --model " + source.substr(0, source.rfind('/')) +
      " --extension as-configured evaluates the folder as configured; a trial of a folder with rope_scaling is not "
      "supported yet");
}

namespace {

// Whether a `position` block names a variant other than RoPE that starts as RoPE.
bool ConvertsFromRope(const nlohmann::json& position) {
  if (!position.is_object() || !position.contains("variant") || !position["variant"].is_string()) return false;
  PositionConfig config;
  config.variant = position["variant"].get<std::string>();
  const nlohmann::json::json_pointer fixed_log("/adarope/fixed_log");
  if (position.contains(fixed_log) && position.at(fixed_log).is_boolean()) config.adarope.fixed_log = position.at(fixed_log).get<bool>();
  const PositionalVariant* variant = FindPositionalVariant(config.variant);
  return config.variant != "rope" && variant != nullptr && variant->StartsAsRope(config);
}

}  // namespace

StatusOr<std::vector<std::pair<std::string, nlohmann::json>>> HfFolderModelKeys(const std::string& folder,
                                                                                const nlohmann::json& position) {
  RUNG_ASSIGN_OR_RETURN(const HfModelConfig hf, ReadHfModelConfig(folder));
  RUNG_RETURN_IF_ERROR(CheckTrialCanRunFolder(hf, folder + "/config.json"));
  RUNG_ASSIGN_OR_RETURN(const ModelConfig config, ModelConfigFromHf(hf, folder + "/config.json"));
  std::vector<std::pair<std::string, nlohmann::json>> keys = {
      {"model.vocab_size", config.vocab_size},   {"model.layers", config.layers},
      {"model.d_model", config.d_model},         {"model.heads", config.heads},
      {"model.kv_heads", config.kv_heads},       {"model.head_dim", config.head_dim},
      {"model.mlp", config.mlp},                 {"model.mlp_hidden", config.mlp_hidden},
      {"model.norm_eps", config.norm_eps},       {"model.qk_norm", config.qk_norm},
      {"model.qkv_bias", config.qkv_bias},       {"model.tie_embeddings", config.tie_embeddings},
      {"position.base", config.position.base}};
  if (config.position.variant != "rope" || !ConvertsFromRope(position)) {
    keys.emplace_back("position.variant", config.position.variant);
  }
  if (config.position.variant == "prope") keys.emplace_back("position.fraction", config.position.fraction);
  return keys;
}

}  // namespace rung::hf
