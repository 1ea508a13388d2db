#include "core/hf/hf_export.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/hf/rotary_permutation.h"
#include "core/hf/safetensors.h"

namespace rung::hf {
namespace {

StatusOr<SafetensorsDtype> StoredDtype(const torch::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case torch::kFloat: return SafetensorsDtype::kF32;
    case torch::kBFloat16: return SafetensorsDtype::kBF16;
    case torch::kHalf: return SafetensorsDtype::kF16;
    default: return Status::Internal("a parameter of dtype " + std::string(c10::toString(tensor.scalar_type())));
  }
}

StatusOr<SafetensorsEntry> Entry(const std::string& name, const torch::Tensor& value) {
  const torch::Tensor tensor = value.detach().contiguous().cpu();
  SafetensorsEntry entry;
  entry.name = name;
  RUNG_ASSIGN_OR_RETURN(entry.dtype, StoredDtype(tensor));
  entry.shape = tensor.sizes().vec();
  entry.bytes.assign(static_cast<const char*>(tensor.data_ptr()), tensor.numel() * tensor.element_size());
  return entry;
}

// p-RoPE's rotated dimensions r = 2 floor(p d/2) (partial_rotary_factor r/d).
int64_t RotatedDims(const ModelConfig& c) {
  return 2 * static_cast<int64_t>(std::floor(c.position.fraction * static_cast<double>(c.rotary_pairs())));
}

}  // namespace

Status CheckExportable(const ModelConfig& c) {
  const std::string why = "transformers' Llama, Qwen2, Qwen3 and Phi-3 architectures cannot express ";
  if (c.position.variant != "rope" && c.position.variant != "prope") {
    return Status::FailedPrecondition(why + "position.variant " + c.position.variant +
                                      ": they rotate the pairs of a head at RoPE's frequencies b^(-2f/d) (all of them, "
                                      "or Phi-3's first share), with nothing learned and no attention bias");
  }
  if (c.position.variant == "prope") {
    const int64_t rotated = RotatedDims(c);
    const double factor = static_cast<double>(rotated) / static_cast<double>(c.head_dim);
    if (rotated < 2 || static_cast<int64_t>(static_cast<double>(c.head_dim) * factor) != rotated) {
      return Status::FailedPrecondition(why + "position.fraction " + std::to_string(c.position.fraction) +
                                        " at head_dim " + std::to_string(c.head_dim) + ": no partial_rotary_factor "
                                        "gives its " + std::to_string(rotated) + " rotated dimensions");
    }
    if (c.qk_norm || c.qkv_bias || c.heads * c.head_dim != c.d_model) {
      return Status::FailedPrecondition(why + "p-RoPE with QK-norm, a q/k/v bias or heads x head_dim other than "
                                        "d_model (partial rotation is Phi-3's, which has none of them)");
    }
  }
  if (c.inverse_temperature.form != "none") {
    return Status::FailedPrecondition(why + "inverse_temperature.form " + c.inverse_temperature.form +
                                      ": their attention scales logits by 1/sqrt(head_dim) only");
  }
  if (c.mlp != "swiglu") return Status::FailedPrecondition(why + "model.mlp " + c.mlp + ": their MLPs are gated (swiglu)");
  if (c.qk_norm && c.qkv_bias) {
    return Status::FailedPrecondition(why + "QK-norm with a q/k/v bias together (Qwen3 has the norm, Qwen2 the bias)");
  }
  return Status::Ok();
}

Status ExportHfModel(Transformer& model, const std::string& folder) {
  const ModelConfig& c = model->config();
  RUNG_RETURN_IF_ERROR(CheckExportable(c));
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::exists(folder, error) && !(fs::is_directory(folder, error) && fs::is_empty(folder, error))) {
    return Status::InvalidArgument(folder + " exists and is not an empty folder: export writes a new folder");
  }
  const fs::path target = fs::absolute(folder, error);
  const fs::path parent = target.parent_path();
  if (!fs::is_directory(parent, error)) return Status::InvalidArgument(parent.string() + " is not a folder");

  const int64_t hd = c.head_dim, heads = c.heads, kv = c.kv_heads;
  const bool phi3 = c.position.variant == "prope";
  const int64_t rotated = phi3 ? RotatedDims(c) : hd;
  const torch::Tensor rows = RungToHfRotaryRows(hd, rotated);
  std::vector<SafetensorsEntry> entries;
  auto params = model->named_parameters(true);
  auto add = [&](const std::string& name, const torch::Tensor& value) -> Status {
    RUNG_ASSIGN_OR_RETURN(SafetensorsEntry entry, Entry(name, value));
    entries.push_back(std::move(entry));
    return Status::Ok();
  };
  RUNG_RETURN_IF_ERROR(add("model.embed_tokens.weight", params["embedding"]));
  for (int64_t layer = 0; layer < c.layers; ++layer) {
    const std::string hf = "model.layers." + std::to_string(layer) + ".";
    const std::string rung = "blocks_" + std::to_string(layer) + "_";
    RUNG_RETURN_IF_ERROR(add(hf + "input_layernorm.weight", params[rung + "attn_norm"]));
    const auto qkv = params[rung + "qkv"].split_with_sizes({heads * hd, kv * hd, kv * hd}, 0);
    if (phi3) {  // one qkv_proj [q; k; v]
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.qkv_proj.weight",
                               torch::cat({PermuteHeadRows(qkv[0], heads, rows), PermuteHeadRows(qkv[1], kv, rows), qkv[2]})));
    } else {
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.q_proj.weight", PermuteHeadRows(qkv[0], heads, rows)));
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.k_proj.weight", PermuteHeadRows(qkv[1], kv, rows)));
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.v_proj.weight", qkv[2]));
    }
    if (c.qkv_bias) {
      const auto bias = params[rung + "qkv_bias"].split_with_sizes({heads * hd, kv * hd, kv * hd}, 0);
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.q_proj.bias", PermuteHeadRows(bias[0], heads, rows)));
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.k_proj.bias", PermuteHeadRows(bias[1], kv, rows)));
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.v_proj.bias", bias[2]));
    }
    if (c.qk_norm) {
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.q_norm.weight", PermuteHeadRows(params[rung + "q_norm"], 1, rows)));
      RUNG_RETURN_IF_ERROR(add(hf + "self_attn.k_norm.weight", PermuteHeadRows(params[rung + "k_norm"], 1, rows)));
    }
    RUNG_RETURN_IF_ERROR(add(hf + "self_attn.o_proj.weight", params[rung + "attn_out"]));
    RUNG_RETURN_IF_ERROR(add(hf + "post_attention_layernorm.weight", params[rung + "mlp_norm"]));
    if (phi3) {  // one gate_up_proj [gate; up], rung's own layout
      RUNG_RETURN_IF_ERROR(add(hf + "mlp.gate_up_proj.weight", params[rung + "mlp_up"]));
    } else {
      const auto gate_up = params[rung + "mlp_up"].chunk(2, 0);
      RUNG_RETURN_IF_ERROR(add(hf + "mlp.gate_proj.weight", gate_up[0]));
      RUNG_RETURN_IF_ERROR(add(hf + "mlp.up_proj.weight", gate_up[1]));
    }
    RUNG_RETURN_IF_ERROR(add(hf + "mlp.down_proj.weight", params[rung + "mlp_down"]));
  }
  RUNG_RETURN_IF_ERROR(add("model.norm.weight", params["final_norm"]));
  if (!c.tie_embeddings) RUNG_RETURN_IF_ERROR(add("lm_head.weight", params["head"]));
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });

  const char* architecture = phi3         ? "Phi3ForCausalLM"
                             : c.qk_norm  ? "Qwen3ForCausalLM"
                             : c.qkv_bias ? "Qwen2ForCausalLM"
                                          : "LlamaForCausalLM";
  const char* model_type = phi3 ? "phi3" : c.qk_norm ? "qwen3" : c.qkv_bias ? "qwen2" : "llama";
  nlohmann::json config = {
      {"architectures", {architecture}},
      {"model_type", model_type},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.d_model},
      {"intermediate_size", c.mlp_hidden},
      {"num_hidden_layers", c.layers},
      {"num_attention_heads", heads},
      {"num_key_value_heads", kv},
      {"head_dim", hd},
      {"hidden_act", "silu"},
      {"rms_norm_eps", c.norm_eps},
      {"rope_theta", c.position.base},
      {"rope_scaling", nullptr},
      {"max_position_embeddings", c.seq_len},
      {"tie_word_embeddings", c.tie_embeddings},
      {"attention_bias", false},
      {"torch_dtype", params["embedding"].scalar_type() == torch::kBFloat16 ? "bfloat16"
                      : params["embedding"].scalar_type() == torch::kHalf  ? "float16"
                                                                            : "float32"},
      {"bos_token_id", nullptr},
      {"eos_token_id", nullptr},
  };
  if (phi3) {
    // transformers rotates the first r dimensions at b_hf^(-2f/r): b_hf = b^(r/d) gives rung's b^(-2f/d).
    const double factor = static_cast<double>(rotated) / static_cast<double>(hd);
    config["partial_rotary_factor"] = factor;
    config["rope_theta"] = std::pow(c.position.base, factor);
    config["original_max_position_embeddings"] = c.seq_len;
    config["sliding_window"] = nullptr;
    config.erase("attention_bias");
  } else if (c.qk_norm || c.qkv_bias) {
    config["use_sliding_window"] = false;
    config["sliding_window"] = nullptr;
    if (!c.qk_norm) config.erase("attention_bias");  // Qwen3 keeps the key, Qwen2 has none
  } else {
    config["mlp_bias"] = false;
  }

  // Written into a hidden folder beside the target, renamed into place when whole.
  const fs::path staging = parent / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
  fs::remove_all(staging, error);
  if (!fs::create_directory(staging, error)) {
    return Status::InvalidArgument("cannot create " + staging.string() + ": " + error.message());
  }
  auto write = [&](const std::string& name, const std::string& text) -> Status {
    RUNG_ASSIGN_OR_RETURN(OutputFile file, OutputFile::Open((staging / name).string()));
    RUNG_RETURN_IF_ERROR(file.Write(text));
    return file.Commit();
  };
  Status written = write("config.json", config.dump(2) + "\n");
  if (written.ok()) written = write("model.safetensors", SafetensorsImage(entries, {{"format", "pt"}}));
  if (written.ok()) {
    if (fs::exists(target, error)) fs::remove(target, error);  // the empty folder checked above
    fs::rename(staging, target, error);
    if (error) written = Status::Internal("cannot rename " + staging.string() + " to " + target.string() + ": " + error.message());
  }
  if (!written.ok()) fs::remove_all(staging, error);
  return written;
}

}  // namespace rung::hf
