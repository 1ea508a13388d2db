#include "core/config/lora_config.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace rung {

const std::vector<std::string>& LoraTargetNames() {
  static const std::vector<std::string> names = {"q", "k", "v", "o", "gate", "up", "down"};
  return names;
}

void ValidateLoraConfig(const LoraConfig& lora, const ModelConfig& model, std::vector<ConfigError>* errors) {
  auto error = [&](const std::string& key, const std::string& message) {
    errors->push_back({"train.lora." + key, message});
  };
  if (lora.rank < 0) error("rank", "must be >= 1, or 0 for no adapters");
  if (!lora.enabled()) return;
  if (!(lora.alpha > 0.0) || !std::isfinite(lora.alpha)) error("alpha", "must be a positive number");
  if (!(lora.dropout >= 0.0 && lora.dropout < 1.0)) error("dropout", "must lie in [0, 1)");
  if (lora.targets.empty()) error("targets", "name at least one projection (q, k, v, o, gate, up, down)");
  std::set<std::string> seen;
  for (const std::string& target : lora.targets) {
    if (!seen.insert(target).second) error("targets", "names " + target + " twice");
  }
  if (seen.count("gate") > 0 && model.mlp != "swiglu") {
    error("targets", "gate is a SwiGLU MLP's; model.mlp is " + model.mlp + ", whose MLP has only up and down");
  }
  // The smaller side of each projection bounds the rank (a wider adapter is a full-rank update).
  const int64_t attention_width = model.heads * model.head_dim, kv_width = model.kv_heads * model.head_dim;
  for (const std::string& target : lora.targets) {
    const int64_t out = target == "q"                        ? attention_width
                        : target == "k" || target == "v"     ? kv_width
                        : target == "o" || target == "down"  ? model.d_model
                                                             : model.mlp_hidden;
    const int64_t in = target == "o" ? attention_width : target == "down" ? model.mlp_hidden : model.d_model;
    const int64_t bound = std::min(out, in);
    if (bound > 0 && lora.rank > bound) {
      error("rank", std::to_string(lora.rank) + " exceeds " + target + "'s smaller dimension " + std::to_string(bound));
      break;
    }
  }
}

}  // namespace rung
