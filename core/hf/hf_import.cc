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

// Views tensors of the folder by name in their mapped files, checking each against the shape config.json
// implies; once the caller has copied what it viewed, ReleaseViewed lets the kernel drop those pages, so
// loading holds one copy of the weights (ours), not the file's beside it.
class TensorReader {
 public:
  TensorReader(const HfWeights& weights, std::string config_source)
      : weights_(weights), config_source_(std::move(config_source)) {}

  StatusOr<torch::Tensor> View(const std::string& name, const std::vector<int64_t>& shape) {
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
    viewed_.emplace_back(file, tensor);
    // A view of the read-only mapping: only ever copied from, never written.
    return torch::from_blob(const_cast<unsigned char*>(file->Data(*tensor)), shape, torch::TensorOptions().dtype(*dtype));
  }

  void ReleaseViewed() {
    for (const auto& [file, tensor] : viewed_) file->ReleasePages(*tensor);
    viewed_.clear();
  }

 private:
  const HfWeights& weights_;
  std::string config_source_;
  std::vector<std::pair<const SafetensorsFile*, const SafetensorsTensor*>> viewed_;
};

// One part of a fused parameter: its rows, permuted head by head by `order` when `heads` > 0.
struct FusedPart {
  torch::Tensor rows;
  int64_t heads = 0;
};

// The parts stacked along dim 0 into one new tensor of the first part's dtype, written in place (no
// intermediate copies).
torch::Tensor Fuse(const std::vector<FusedPart>& parts, const torch::Tensor& order) {
  int64_t total = 0;
  for (const FusedPart& part : parts) total += part.rows.size(0);
  std::vector<int64_t> shape = parts[0].rows.sizes().vec();
  shape[0] = total;
  torch::Tensor fused = torch::empty(shape, parts[0].rows.options());
  int64_t offset = 0;
  for (const FusedPart& part : parts) {
    const int64_t rows = part.rows.size(0);
    torch::Tensor target = fused.narrow(0, offset, rows);
    const torch::Tensor source = part.rows.scalar_type() == fused.scalar_type() ? part.rows : part.rows.to(fused.scalar_type());
    if (part.heads > 0) {
      std::vector<int64_t> split = {part.heads, order.size(0)};
      split.insert(split.end(), shape.begin() + 1, shape.end());
      torch::Tensor permuted = target.view(split);
      torch::index_select_out(permuted, source.reshape(split), 1, order);
    } else {
      target.copy_(source);
    }
    offset += rows;
  }
  return fused;
}

// Every parameter of `model` set to its value in `values` (in the value's dtype).
Status AssignParameters(torch::nn::Module& model, const std::map<std::string, torch::Tensor>& values) {
  auto parameters = model.named_parameters(true);
  torch::NoGradGuard no_grad;
  for (const auto& [name, value] : values) {
    torch::Tensor* parameter = parameters.find(name);
    if (parameter == nullptr) return Status::Internal("rung's model has no parameter " + name);
    parameter->set_data(value);
  }
  return Status::Ok();
}

}  // namespace

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

StatusOr<ImportedModel> ImportHfModel(const std::string& folder) {
  ImportedModel imported;
  RUNG_ASSIGN_OR_RETURN(imported.hf, ReadHfModelConfig(folder));
  const std::string source = folder + "/config.json";
  RUNG_ASSIGN_OR_RETURN(imported.config, ModelConfigFromHf(imported.hf, source));
  RUNG_ASSIGN_OR_RETURN(HfWeights weights, HfWeights::Open(folder));
  const ModelConfig& c = imported.config;
  const int64_t d = c.d_model, hd = c.head_dim, heads = c.heads, kv = c.kv_heads;
  TensorReader reader(weights, source);
  // Every tensor read and checked against the folder's files first; the model (whose shapes come from
  // config.json alone) is built only once they all agree with it.
  std::map<std::string, torch::Tensor> parameters;
  const torch::Tensor rows = HfToRungRotaryRows(hd, imported.hf.RotaryDims());
  const bool phi3 = imported.hf.architecture == HfArchitecture::kPhi3;

  auto copy = [&](const std::string& rung_name, const std::string& hf_name, const std::vector<int64_t>& shape) -> Status {
    RUNG_ASSIGN_OR_RETURN(torch::Tensor view, reader.View(hf_name, shape));
    parameters[rung_name] = view.clone();
    reader.ReleaseViewed();
    return Status::Ok();
  };
  RUNG_RETURN_IF_ERROR(copy("embedding", "model.embed_tokens.weight", {c.vocab_size, d}));
  for (int64_t layer = 0; layer < c.layers; ++layer) {
    const std::string hf = "model.layers." + std::to_string(layer) + ".";
    const std::string rung = "blocks_" + std::to_string(layer) + "_";
    RUNG_RETURN_IF_ERROR(copy(rung + "attn_norm", hf + "input_layernorm.weight", {d}));
    torch::Tensor q, k, v;
    if (phi3) {  // one qkv_proj [q; k; v]
      RUNG_ASSIGN_OR_RETURN(torch::Tensor qkv, reader.View(hf + "self_attn.qkv_proj.weight", {(heads + 2 * kv) * hd, d}));
      q = qkv.narrow(0, 0, heads * hd), k = qkv.narrow(0, heads * hd, kv * hd), v = qkv.narrow(0, (heads + kv) * hd, kv * hd);
    } else {
      RUNG_ASSIGN_OR_RETURN(q, reader.View(hf + "self_attn.q_proj.weight", {heads * hd, d}));
      RUNG_ASSIGN_OR_RETURN(k, reader.View(hf + "self_attn.k_proj.weight", {kv * hd, d}));
      RUNG_ASSIGN_OR_RETURN(v, reader.View(hf + "self_attn.v_proj.weight", {kv * hd, d}));
    }
    parameters[rung + "qkv"] = Fuse({{q, heads}, {k, kv}, {v, 0}}, rows);
    if (c.qkv_bias) {
      RUNG_ASSIGN_OR_RETURN(torch::Tensor q_bias, reader.View(hf + "self_attn.q_proj.bias", {heads * hd}));
      RUNG_ASSIGN_OR_RETURN(torch::Tensor k_bias, reader.View(hf + "self_attn.k_proj.bias", {kv * hd}));
      RUNG_ASSIGN_OR_RETURN(torch::Tensor v_bias, reader.View(hf + "self_attn.v_proj.bias", {kv * hd}));
      parameters[rung + "qkv_bias"] = Fuse({{q_bias, heads}, {k_bias, kv}, {v_bias, 0}}, rows);
    }
    if (c.qk_norm) {
      RUNG_ASSIGN_OR_RETURN(torch::Tensor q_norm, reader.View(hf + "self_attn.q_norm.weight", {hd}));
      RUNG_ASSIGN_OR_RETURN(torch::Tensor k_norm, reader.View(hf + "self_attn.k_norm.weight", {hd}));
      parameters[rung + "q_norm"] = Fuse({{q_norm, 1}}, rows);
      parameters[rung + "k_norm"] = Fuse({{k_norm, 1}}, rows);
    }
    RUNG_RETURN_IF_ERROR(copy(rung + "attn_out", hf + "self_attn.o_proj.weight", {d, heads * hd}));
    RUNG_RETURN_IF_ERROR(copy(rung + "mlp_norm", hf + "post_attention_layernorm.weight", {d}));
    if (phi3) {  // one gate_up_proj [gate; up], rung's own layout
      RUNG_RETURN_IF_ERROR(copy(rung + "mlp_up", hf + "mlp.gate_up_proj.weight", {2 * c.mlp_hidden, d}));
    } else {
      RUNG_ASSIGN_OR_RETURN(torch::Tensor gate, reader.View(hf + "mlp.gate_proj.weight", {c.mlp_hidden, d}));
      RUNG_ASSIGN_OR_RETURN(torch::Tensor up, reader.View(hf + "mlp.up_proj.weight", {c.mlp_hidden, d}));
      parameters[rung + "mlp_up"] = Fuse({{gate, 0}, {up, 0}}, rows);
    }
    RUNG_RETURN_IF_ERROR(copy(rung + "mlp_down", hf + "mlp.down_proj.weight", {d, c.mlp_hidden}));
    reader.ReleaseViewed();
  }
  RUNG_RETURN_IF_ERROR(copy("final_norm", "model.norm.weight", {d}));
  if (!c.tie_embeddings) RUNG_RETURN_IF_ERROR(copy("head", "lm_head.weight", {c.vocab_size, d}));
  Transformer model(c, Initialization::kEmpty);
  RUNG_RETURN_IF_ERROR(AssignParameters(*model, parameters));
  model->eval();
  imported.model = model;
  return imported;
}

}  // namespace rung::hf
