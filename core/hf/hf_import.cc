#include "core/hf/hf_import.h"

#include <sys/stat.h>

#include <cmath>
#include <map>
#include <vector>

#include "core/hf/hf_weights.h"
#include "core/hf/rotary_permutation.h"

namespace rung::hf {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

StatusOr<torch::Dtype> TorchDtype(SafetensorsDtype dtype) {
  switch (dtype) {
    case SafetensorsDtype::kBF16: return torch::kBFloat16;
    case SafetensorsDtype::kF16: return torch::kHalf;
    case SafetensorsDtype::kF32: return torch::kFloat;
    default: return Status::DataLoss("unsupported");
  }
}

// Reads tensors of the folder by name, checking each against the shape config.json implies.
class TensorReader {
 public:
  TensorReader(const HfWeights& weights, std::string config_source)
      : weights_(weights), config_source_(std::move(config_source)) {}

  StatusOr<torch::Tensor> Read(const std::string& name, const std::vector<int64_t>& shape) const {
    const SafetensorsFile* file = nullptr;
    const SafetensorsTensor* tensor = weights_.Find(name, &file);
    if (tensor == nullptr) {
      return Status::DataLoss("the model folder has no tensor '" + name + "', which " + config_source_ + " implies");
    }
    if (tensor->shape != shape) {
      return Status::DataLoss(file->path() + ": tensor '" + name + "' has shape " + ShapeText(tensor->shape) + ", " +
                              config_source_ + " implies " + ShapeText(shape));
    }
    StatusOr<torch::Dtype> dtype = TorchDtype(tensor->dtype);
    if (!dtype.ok()) {
      return Status::DataLoss(file->path() + ": tensor '" + name + "' is " + SafetensorsDtypeName(tensor->dtype) +
                              "; rung reads BF16, F16 and F32");
    }
    // The mapping is read-only and may be unaligned for the dtype: from_blob views it, clone copies it;
    // then the mapped pages go, so that loading holds one copy of the weights, not the file's and ours.
    torch::Tensor copy =
        torch::from_blob(const_cast<unsigned char*>(file->Data(*tensor)), shape, torch::TensorOptions().dtype(*dtype))
            .clone();
    file->ReleasePages(*tensor);
    return copy;
  }

  bool Has(const std::string& name) const { return weights_.Find(name) != nullptr; }

 private:
  const HfWeights& weights_;
  std::string config_source_;
};

Status Assign(torch::nn::Module& model, const std::string& name, const torch::Tensor& value) {
  auto parameters = model.named_parameters(true);
  torch::Tensor* parameter = parameters.find(name);
  if (parameter == nullptr) return Status::Internal("rung's model has no parameter " + name);
  torch::NoGradGuard no_grad;
  parameter->set_data(value);
  return Status::Ok();
}

}  // namespace

int64_t OriginalContext(const HfModelConfig& hf) {
  const HfRopeScaling& scaling = hf.rope_scaling;
  if ((scaling.type == "yarn" || scaling.type == "llama3") && scaling.original_max_position_embeddings) {
    return *scaling.original_max_position_embeddings;
  }
  return hf.max_position_embeddings;
}

LengthExtension ConfiguredExtension(const HfModelConfig& hf, int64_t seq_len) {
  const HfRopeScaling& scaling = hf.rope_scaling;
  LengthExtension extension;
  extension.rope_base = hf.rope_theta;
  extension.train_length = static_cast<double>(OriginalContext(hf));
  if (scaling.type == "linear") {
    extension.method = "pi";
    extension.scale = scaling.factor;
  } else if (scaling.type == "dynamic") {
    const double length = static_cast<double>(hf.max_position_embeddings);
    if (static_cast<double>(seq_len) > length) {
      extension.method = "dynamic_ntk";
      extension.scale = scaling.factor * static_cast<double>(seq_len) / length - (scaling.factor - 1.0);
    }
  } else if (scaling.type == "yarn") {
    extension.method = "yarn_hf";
    extension.scale = scaling.original_max_position_embeddings
                          ? static_cast<double>(hf.max_position_embeddings) / extension.train_length
                          : scaling.factor;
    extension.alpha = scaling.beta_slow;
    extension.beta = scaling.beta_fast;
    extension.truncate = scaling.truncate;
    auto mscale = [&](double m) { return extension.scale <= 1.0 ? 1.0 : 0.1 * m * std::log(extension.scale) + 1.0; };
    if (scaling.attention_factor) {
      extension.attention_factor = *scaling.attention_factor;
    } else if (scaling.mscale && scaling.mscale_all_dim && *scaling.mscale != 0 && *scaling.mscale_all_dim != 0) {
      extension.attention_factor = mscale(*scaling.mscale) / mscale(*scaling.mscale_all_dim);
    } else {
      extension.attention_factor = mscale(1.0);
    }
  } else if (scaling.type == "llama3") {
    extension.method = "llama3";
    extension.scale = scaling.factor;
    extension.low_freq_factor = scaling.low_freq_factor;
    extension.high_freq_factor = scaling.high_freq_factor;
  }
  return extension;
}

StatusOr<ModelConfig> ModelConfigFromHf(const HfModelConfig& hf, const std::string& source) {
  auto refuse = [&](const std::string& what) {
    return Status::FailedPrecondition(source + ": " + what + " (" + HfArchitectureName(hf.architecture) +
                                      " is imported without it)");
  };
  if (hf.hidden_act != "silu") return refuse("hidden_act '" + hf.hidden_act + "': rung's gated MLP computes silu only");
  if (hf.output_bias) return refuse("attention_bias true: rung's model has no o_proj bias");
  if (hf.mlp_bias) return refuse("mlp_bias true: rung's model has no MLP biases");
  if (hf.partial_rotary_factor != 1.0) {
    return refuse("partial_rotary_factor " + std::to_string(hf.partial_rotary_factor) +
                  ": this architecture rotates whole heads in transformers");
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

StatusOr<ImportedModel> ImportHfModel(const std::string& folder) {
  ImportedModel imported;
  RUNG_ASSIGN_OR_RETURN(imported.hf, ReadHfModelConfig(folder));
  const std::string source = folder + "/config.json";
  RUNG_ASSIGN_OR_RETURN(imported.config, ModelConfigFromHf(imported.hf, source));
  RUNG_ASSIGN_OR_RETURN(HfWeights weights, HfWeights::Open(folder));
  const ModelConfig& c = imported.config;
  const int64_t d = c.d_model, hd = c.head_dim, heads = c.heads, kv = c.kv_heads;
  const TensorReader reader(weights, source);
  // Every tensor read and checked against the folder's files first; the model (whose shapes come from
  // config.json alone) is built only once they all agree with it.
  std::map<std::string, torch::Tensor> parameters;
  auto assign = [&](const std::string& name, const torch::Tensor& value) {
    parameters[name] = value;
    return Status::Ok();
  };
  const torch::Tensor rows = HfToRungRotaryRows(hd);

  RUNG_ASSIGN_OR_RETURN(torch::Tensor embedding, reader.Read("model.embed_tokens.weight", {c.vocab_size, d}));
  RUNG_RETURN_IF_ERROR(assign("embedding", embedding));
  for (int64_t layer = 0; layer < c.layers; ++layer) {
    const std::string hf = "model.layers." + std::to_string(layer) + ".";
    const std::string rung = "blocks_" + std::to_string(layer) + "_";
    RUNG_ASSIGN_OR_RETURN(torch::Tensor attn_norm, reader.Read(hf + "input_layernorm.weight", {d}));
    RUNG_RETURN_IF_ERROR(assign(rung + "attn_norm", attn_norm));
    RUNG_ASSIGN_OR_RETURN(torch::Tensor q, reader.Read(hf + "self_attn.q_proj.weight", {heads * hd, d}));
    RUNG_ASSIGN_OR_RETURN(torch::Tensor k, reader.Read(hf + "self_attn.k_proj.weight", {kv * hd, d}));
    RUNG_ASSIGN_OR_RETURN(torch::Tensor v, reader.Read(hf + "self_attn.v_proj.weight", {kv * hd, d}));
    RUNG_RETURN_IF_ERROR(assign(
        rung + "qkv",
        torch::cat({PermuteHeadRows(q, heads, rows), PermuteHeadRows(k, kv, rows), v}, 0).to(q.scalar_type())));
    if (c.qkv_bias) {
      RUNG_ASSIGN_OR_RETURN(torch::Tensor q_bias, reader.Read(hf + "self_attn.q_proj.bias", {heads * hd}));
      RUNG_ASSIGN_OR_RETURN(torch::Tensor k_bias, reader.Read(hf + "self_attn.k_proj.bias", {kv * hd}));
      RUNG_ASSIGN_OR_RETURN(torch::Tensor v_bias, reader.Read(hf + "self_attn.v_proj.bias", {kv * hd}));
      RUNG_RETURN_IF_ERROR(assign(rung + "qkv_bias",
                                  torch::cat({PermuteHeadRows(q_bias, heads, rows), PermuteHeadRows(k_bias, kv, rows),
                                              v_bias.to(q_bias.scalar_type())},
                                             0)));
    }
    if (c.qk_norm) {
      RUNG_ASSIGN_OR_RETURN(torch::Tensor q_norm, reader.Read(hf + "self_attn.q_norm.weight", {hd}));
      RUNG_ASSIGN_OR_RETURN(torch::Tensor k_norm, reader.Read(hf + "self_attn.k_norm.weight", {hd}));
      RUNG_RETURN_IF_ERROR(assign(rung + "q_norm", PermuteHeadRows(q_norm, 1, rows)));
      RUNG_RETURN_IF_ERROR(assign(rung + "k_norm", PermuteHeadRows(k_norm, 1, rows)));
    }
    RUNG_ASSIGN_OR_RETURN(torch::Tensor out, reader.Read(hf + "self_attn.o_proj.weight", {d, heads * hd}));
    RUNG_RETURN_IF_ERROR(assign(rung + "attn_out", out));
    RUNG_ASSIGN_OR_RETURN(torch::Tensor mlp_norm, reader.Read(hf + "post_attention_layernorm.weight", {d}));
    RUNG_RETURN_IF_ERROR(assign(rung + "mlp_norm", mlp_norm));
    RUNG_ASSIGN_OR_RETURN(torch::Tensor gate, reader.Read(hf + "mlp.gate_proj.weight", {c.mlp_hidden, d}));
    RUNG_ASSIGN_OR_RETURN(torch::Tensor up, reader.Read(hf + "mlp.up_proj.weight", {c.mlp_hidden, d}));
    RUNG_RETURN_IF_ERROR(assign(rung + "mlp_up", torch::cat({gate, up.to(gate.scalar_type())}, 0)));
    RUNG_ASSIGN_OR_RETURN(torch::Tensor down, reader.Read(hf + "mlp.down_proj.weight", {d, c.mlp_hidden}));
    RUNG_RETURN_IF_ERROR(assign(rung + "mlp_down", down));
  }
  RUNG_ASSIGN_OR_RETURN(torch::Tensor final_norm, reader.Read("model.norm.weight", {d}));
  RUNG_RETURN_IF_ERROR(assign("final_norm", final_norm));
  if (!c.tie_embeddings) {
    RUNG_ASSIGN_OR_RETURN(torch::Tensor head, reader.Read("lm_head.weight", {c.vocab_size, d}));
    RUNG_RETURN_IF_ERROR(assign("head", head));
  }
  Transformer model(c, Initialization::kEmpty);
  for (const auto& [name, value] : parameters) RUNG_RETURN_IF_ERROR(Assign(*model, name, value));
  model->eval();
  imported.model = model;
  return imported;
}

}  // namespace rung::hf
