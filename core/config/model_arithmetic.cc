#include "core/config/model_arithmetic.h"

#include "core/common/checked_arithmetic.h"
#include "core/config/inverse_temperature_form.h"
#include "core/config/positional_variant.h"

namespace rung {
namespace {

// The learned positional and inverse-temperature parameters, overflow-checked.
CheckedInt64 PositionalCount(const ModelConfig& c) {
  const PositionalVariant* variant = FindPositionalVariant(c.position.variant);
  CheckedInt64 count = variant != nullptr ? variant->PositionalParameters(c) : CheckedInt64(0);
  const InverseTemperatureForm* form = FindInverseTemperatureForm(c.inverse_temperature.form);
  if (form != nullptr) count = count + form->Parameters(c);
  return count;
}

}  // namespace

int64_t CountPositionalParameters(const ModelConfig& c) { return PositionalCount(c).value().value_or(0); }

ParameterCounts CountParameters(const ModelConfig& c) {
  const CheckedInt64 q_width = CheckedInt64(c.heads) * c.head_dim;
  const CheckedInt64 kv_width = CheckedInt64(c.kv_heads) * c.head_dim;
  const CheckedInt64 qkv_bias = c.qkv_bias ? q_width + 2 * kv_width : CheckedInt64(0);
  const CheckedInt64 attention = c.layers * (c.d_model * (q_width + 2 * kv_width) + q_width * c.d_model + qkv_bias);
  const int64_t mlp_matrices = c.mlp == "swiglu" ? 3 : 2;
  const CheckedInt64 mlp = CheckedInt64(c.layers) * mlp_matrices * c.d_model * c.mlp_hidden;
  const CheckedInt64 norms =
      c.layers * (2 * CheckedInt64(c.d_model) + (c.qk_norm ? 2 * CheckedInt64(c.head_dim) : 0)) + c.d_model;
  const CheckedInt64 positional = PositionalCount(c);
  // Parameters a variant adds to the input embedding (the learned absolute position table, section 13).
  const PositionalVariant* variant = FindPositionalVariant(c.position.variant);
  const CheckedInt64 position_table = variant != nullptr ? variant->EmbeddingParameters(c) : CheckedInt64(0);
  const CheckedInt64 embedding = CheckedInt64(c.vocab_size) * c.d_model + position_table;
  const CheckedInt64 output_head = CheckedInt64(c.d_model) * c.vocab_size;
  // Every part, and every sum of parts the accessors form, fits when the total does (parts are >= 0
  // in a validated config).
  const CheckedInt64 total = attention + mlp + norms + positional + embedding + output_head;
  ParameterCounts counts;
  if (!total.value()) {
    counts.overflow = true;
    return counts;
  }
  counts.attention = *attention.value();
  counts.mlp = *mlp.value();
  counts.norms = *norms.value();
  counts.positional = *positional.value();
  counts.embedding = *embedding.value();
  counts.output_head = *output_head.value();
  counts.head_tied = c.tie_embeddings;
  return counts;
}

FlopsPerToken CountFlopsPerToken(const ModelConfig& c) {
  ParameterCounts counts = CountParameters(c);
  FlopsPerToken flops;
  flops.nonembedding = 6.0 * static_cast<double>(counts.nonembedding());
  flops.matrix = 6.0 * static_cast<double>(counts.matrix());
  flops.attention = 6.0 * static_cast<double>(c.layers) * static_cast<double>(c.seq_len) *
                    static_cast<double>(c.heads) * static_cast<double>(c.head_dim);
  return flops;
}

nlohmann::json ParameterCountsToJson(const ParameterCounts& counts) {
  return {{"nonembedding", counts.nonembedding()}, {"matrix", counts.matrix()}, {"total", counts.total()},
          {"attention", counts.attention},         {"mlp", counts.mlp},         {"norms", counts.norms},
          {"positional", counts.positional},       {"embedding", counts.embedding},
          {"output_head", counts.output_head}};
}

}  // namespace rung
