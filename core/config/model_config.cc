#include "core/config/model_config.h"

#include <limits>

#include "core/common/checked_arithmetic.h"
#include "core/config/positional_variant.h"

namespace rung {

bool PositionConfig::rotary() const {
  const PositionalVariant* chosen = FindPositionalVariant(variant);
  return chosen != nullptr && chosen->rotary();
}

void ResolveModelConfig(ModelConfig* config) {
  if (config->kv_heads == 0) config->kv_heads = config->heads;
  if (config->head_dim == 0 && config->heads > 0) config->head_dim = config->d_model / config->heads;
  // An overflowing width resolves to a hidden size the limits refuse (config_limits.h).
  if (config->mlp_hidden == 0) {
    config->mlp_hidden = CheckedMul(4, config->d_model).value_or(std::numeric_limits<int64_t>::max());
  }
  if (config->inverse_temperature.n_ref == 0.0) config->inverse_temperature.n_ref = static_cast<double>(config->seq_len);
}

void ValidateModelConfig(const ModelConfig& c, std::vector<ConfigError>* errors) {
  auto error = [&](const std::string& path, const std::string& message) { errors->push_back({path, message}); };
  auto positive = [&](const std::string& path, int64_t value) {
    if (value <= 0) error(path, "must be positive, got " + std::to_string(value));
    return value > 0;
  };
  positive("model.vocab_size", c.vocab_size);
  positive("model.layers", c.layers);
  const bool width_ok = positive("model.d_model", c.d_model);
  bool heads_ok = positive("model.heads", c.heads);
  bool kv_ok = positive("model.kv_heads", c.kv_heads);
  positive("model.mlp_hidden", c.mlp_hidden);
  if (heads_ok && kv_ok && c.heads % c.kv_heads != 0) {
    error("model.kv_heads", "must divide heads (" + std::to_string(c.heads) + "), got " + std::to_string(c.kv_heads));
  }
  // An explicit head_dim may make the attention width heads x head_dim differ from d_model (Qwen3's
  // models: the q and output projections are then not square); one derived as d_model / heads must
  // divide d_model.
  if (positive("model.head_dim", c.head_dim) && width_ok && heads_ok && c.head_dim == c.d_model / c.heads &&
      CheckedMul(c.head_dim, c.heads) != c.d_model) {
    error("model.heads", "heads x head_dim (" + std::to_string(c.heads) + " x " + std::to_string(c.head_dim) +
                             ") must equal d_model (" + std::to_string(c.d_model) + "), or set model.head_dim");
  }
  if (c.position.rotary() && c.head_dim > 0 && c.head_dim % 2 != 0) {
    error("model.head_dim", "rotary variant '" + c.position.variant + "' needs an even head dimension, got " +
                                std::to_string(c.head_dim));
  }
  if (!(c.norm_eps > 0.0)) error("model.norm_eps", "must be positive");
  if (c.seq_len <= 0) error("data.seq_len", "must be positive, got " + std::to_string(c.seq_len));

  const PositionConfig& p = c.position;
  if (!(p.base > 1.0)) error("position.base", "must be > 1, got " + std::to_string(p.base));
  if (!(p.lr_mult >= 0.0)) error("position.lr_mult", "must be >= 0");
  if (!(p.clip >= 0.0)) error("position.clip", "must be >= 0 (0 = no clipping)");
  // Every variant's settings, chosen or not: their keys are read either way.
  for (const PositionalVariant* variant : PositionalVariants()) variant->ValidateSettings(p, errors);

  const InverseTemperatureConfig& t = c.inverse_temperature;
  if (!(t.xi >= 0.0)) error("inverse_temperature.xi", "must be >= 0, got " + std::to_string(t.xi));
  if (!(t.n_ref >= 2.0)) error("inverse_temperature.n_ref", "must be >= 2 (defaults to the training length)");
  if (!(t.s > 0.0)) error("inverse_temperature.s", "must be positive");
}

}  // namespace rung
