// tests/core/model/hand_set_weights.h
//
// What the hand-set test models (induction_model.h, indexing_model.h) are built from: a byte coded by
// its 8 bits as +-1 (two codes agree in 8 - 2 x Hamming distance places), a position by the pairs
// (cos, sin)(pi j / 2^f), RMSNorm's scale for a residual row of known squared norm, and weight blocks
// that copy a code. Every row entering a norm is built with the same squared norm, so one scale holds.
#pragma once

#include <cmath>
#include <cstdint>

#include <torch/torch.h>

#include "core/config/model_config.h"
#include "core/model/transformer.h"

namespace rung::testing_models {

inline constexpr int64_t kCodeBits = 8;

using Matrix = torch::TensorAccessor<float, 2>;

// Bit `bit` of `value` as +-1.
inline float Bit(int64_t value, int64_t bit) { return (value >> bit) & 1 ? 1.0f : -1.0f; }

// The smallest F with 2^F >= max_length: every distance 0 < |m| < max_length has a frequency
// pi / 2^f with cos(pi m / 2^f) = -1, so a position code's pairs agree fully only at distance 0.
inline int64_t PositionPairs(int64_t max_length) {
  int64_t pairs = 1;
  while ((int64_t{1} << pairs) < max_length) ++pairs;
  return pairs;
}

// 1 / RMS of a residual row whose squared norm is `squared_norm`.
inline double InverseRms(double squared_norm, const ModelConfig& config) {
  return 1.0 / std::sqrt(squared_norm / static_cast<double>(config.d_model) + config.norm_eps);
}

// `scale` x the identity from the code at columns [column, column + 8) to rows [row, row + 8).
inline void CopyCode(Matrix weight, int64_t row, int64_t column, double scale) {
  for (int64_t bit = 0; bit < kCodeBits; ++bit) weight[row + bit][column + bit] = static_cast<float>(scale);
}

// The position code of `j` at columns [column, column + 2F) of a table row.
inline void WritePositionCode(Matrix table, int64_t j, int64_t column, int64_t pairs) {
  for (int64_t f = 0; f < pairs; ++f) {
    const double angle = M_PI * static_cast<double>(j) / std::ldexp(1.0, static_cast<int>(f));
    table[j][column + 2 * f] = static_cast<float>(std::cos(angle));
    table[j][column + 2 * f + 1] = static_cast<float>(std::sin(angle));
  }
}

// A head whose query is the position code turned back by `back` steps and whose key is the position
// code (both scaled by `scale`), in rows [0, 2F) and [head_dim, head_dim + 2F) of a fused qkv weight,
// reading the code at `column`: it scores key j by scale^2 x sum_f cos(pi (i - back - j) / 2^f), so
// j = i - back leads every other key by at least 2 scale^2.
inline void LookBackHead(Matrix qkv, int64_t column, int64_t pairs, int64_t head_dim, int64_t back, float scale) {
  for (int64_t f = 0; f < pairs; ++f) {
    const double step = M_PI * static_cast<double>(back) / std::ldexp(1.0, static_cast<int>(f));
    const float c = scale * static_cast<float>(std::cos(step)), s = scale * static_cast<float>(std::sin(step));
    const int64_t in = column + 2 * f, q = 2 * f, k = head_dim + 2 * f;
    qkv[q][in] = c;
    qkv[q][in + 1] = s;
    qkv[q + 1][in] = -s;
    qkv[q + 1][in + 1] = c;
    qkv[k][in] = scale;
    qkv[k + 1][in + 1] = scale;
  }
}

// The shape both hand-set models share: bytes (vocab 256), 2 layers of one head of `head_dim`, a
// residual of `width`, MLPs of one zero unit, a learned absolute table of `max_length` rows.
inline ModelConfig HandSetModelConfig(int64_t width, int64_t head_dim, int64_t max_length) {
  ModelConfig config;
  config.vocab_size = 256;
  config.layers = 2;
  config.d_model = width;
  config.heads = 1;
  config.kv_heads = 1;
  config.head_dim = head_dim;
  config.mlp_hidden = 1;  // zero weights: the MLPs add nothing
  config.seq_len = max_length;
  config.position.variant = "absolute";
  ResolveModelConfig(&config);
  return config;
}

// A model of `config` to set by hand, in eval mode: every parameter zero but the norm gains (one).
inline Transformer ZeroedModel(const ModelConfig& config) {
  Transformer model(config, Initialization::kEmpty);
  model->eval();
  torch::NoGradGuard no_grad;
  for (auto& parameter : model->named_parameters()) {
    const std::string& name = parameter.key();
    const bool gain = name.size() > 5 && name.compare(name.size() - 5, 5, "_norm") == 0;
    parameter.value().fill_(gain ? 1.0 : 0.0);
  }
  return model;
}

// Each byte's code (its bits as +-1) in columns [column, column + 8) of its embedding row.
inline void WriteByteCodes(Matrix embedding, int64_t column) {
  for (int64_t byte = 0; byte < embedding.size(0); ++byte) {
    for (int64_t bit = 0; bit < kCodeBits; ++bit) embedding[byte][column + bit] = Bit(byte, bit);
  }
}

}  // namespace rung::testing_models
