#include "core/config/model_arithmetic.h"

namespace rung {

int64_t CountPositionalParameters(const ModelConfig& c) {
  const PositionConfig& p = c.position;
  int64_t count = 0;
  if (p.variant == "lerope") count += c.rotary_pairs();
  if (p.variant == "adarope") {
    const AdaRopeConfig& a = p.adarope;
    int64_t schedules = a.share_freq == "none" ? c.layers * c.kv_heads : a.share_freq == "layer" ? c.layers : 1;
    count += schedules * (a.learned_base ? 1 : c.rotary_pairs());
    if (a.adascale && !a.fixed_log) count += 2 * c.layers * c.heads;  // tau, gamma
  }
  const InverseTemperatureConfig& t = c.inverse_temperature;
  if (t.form == "log_power" && t.learn_s) count += c.layers * c.heads;
  if (t.form == "ssmax") count += c.layers * c.heads;
  if (t.form == "learned") count += c.seq_len + 2 * c.layers * c.heads;
  return count;
}

ParameterCounts CountParameters(const ModelConfig& c) {
  ParameterCounts counts;
  int64_t q_width = c.heads * c.head_dim;
  int64_t kv_width = c.kv_heads * c.head_dim;
  counts.attention = c.layers * (c.d_model * (q_width + 2 * kv_width) + q_width * c.d_model);
  int64_t mlp_matrices = c.mlp == "swiglu" ? 3 : 2;
  counts.mlp = c.layers * mlp_matrices * c.d_model * c.mlp_hidden;
  counts.norms = c.layers * (2 * c.d_model + (c.qk_norm ? 2 * c.head_dim : 0)) + c.d_model;
  counts.positional = CountPositionalParameters(c);
  counts.embedding = c.vocab_size * c.d_model;
  counts.output_head = c.d_model * c.vocab_size;
  return counts;
}

FlopsPerToken CountFlopsPerToken(const ModelConfig& c) {
  ParameterCounts counts = CountParameters(c);
  FlopsPerToken flops;
  flops.nonembedding = 6.0 * static_cast<double>(counts.nonembedding());
  flops.matrix = 6.0 * static_cast<double>(counts.matrix());
  flops.attention = 6.0 * static_cast<double>(c.layers) * static_cast<double>(c.seq_len) *
                    static_cast<double>(c.heads * c.head_dim);
  return flops;
}

nlohmann::json ParameterCountsToJson(const ParameterCounts& counts) {
  return {{"nonembedding", counts.nonembedding()}, {"matrix", counts.matrix()}, {"total", counts.total()},
          {"attention", counts.attention},         {"mlp", counts.mlp},         {"norms", counts.norms},
          {"positional", counts.positional},       {"embedding", counts.embedding},
          {"output_head", counts.output_head}};
}

}  // namespace rung
