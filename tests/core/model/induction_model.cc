#include "tests/core/model/induction_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "core/train/checkpoint_io.h"
#include "core/train/step_loop.h"
#include "tests/core/model/hand_set_weights.h"

namespace rung::testing_models {
namespace {

constexpr int64_t kVocab = 256;
constexpr double kScoreScale = 16.0;       // S0 = S1: a winning key leads by at least 2 x 16 logits
constexpr double kFirstPenalty = 16.0;     // layer 1's score at key 0, in code agreements
constexpr double kLogitPerAgreement = 4.0; // the head: logit(v) = 4 x agreement with the output code

// Where each part lives in the residual stream (the header's layout).
struct Layout {
  explicit Layout(int64_t max_length) : pairs(PositionPairs(max_length)) {}
  int64_t pairs;
  int64_t token() const { return 0; }
  int64_t position() const { return kCodeBits; }
  int64_t first() const { return position() + 2 * pairs; }
  int64_t later() const { return first() + 1; }
  int64_t previous() const { return later() + 1; }
  int64_t output() const { return previous() + kCodeBits; }
  int64_t width() const { return output() + kCodeBits; }
  // Layer 0 needs the 2F position dimensions, layer 1 a code and the first-position flag.
  int64_t head_dim() const { return std::max(2 * pairs, kCodeBits + 1); }
};

}  // namespace

ModelConfig InductionModelConfig(int64_t max_length) {
  if (max_length < 2) throw std::invalid_argument("InductionModelConfig: max_length must be at least 2");
  const Layout layout(max_length);
  return HandSetModelConfig(layout.width(), layout.head_dim(), max_length);
}

Transformer MakeInductionModel(int64_t max_length) {
  const ModelConfig config = InductionModelConfig(max_length);
  const Layout layout(max_length);
  const int64_t hd = config.head_dim, pairs = layout.pairs;
  Transformer model = ZeroedModel(config);
  torch::NoGradGuard no_grad;
  auto parameters = model->named_parameters();
  auto matrix = [&](const char* name) { return parameters[name].accessor<float, 2>(); };

  // Input: token code + position code + first/later.
  Matrix embedding = matrix("embedding");
  WriteByteCodes(embedding, layout.token());
  Matrix table = matrix("position_embedding");
  for (int64_t j = 0; j < max_length; ++j) {
    WritePositionCode(table, j, layout.position(), pairs);
    table[j][j == 0 ? layout.first() : layout.later()] = 1.0f;
  }

  // The attention kernels divide scores by sqrt(head_dim), and q . k of normed rows carries 1 / RMS^2:
  // q and k both scaled by qk_scale(layer, s) make the score s x (q . k of the unnormed codes).
  const double query_constant = 1.0 / std::sqrt(static_cast<double>(hd));
  const double codes = static_cast<double>(kCodeBits);
  const double input_squared = codes + static_cast<double>(pairs) + 1.0;
  const double inverse_rms[] = {InverseRms(input_squared, config), InverseRms(input_squared + codes, config),
                                InverseRms(input_squared + 2 * codes, config)};
  auto qk_scale = [&](int64_t layer, double scale) { return std::sqrt(scale / query_constant) / inverse_rms[layer]; };

  // Layer 0, previous-token head: q = each pair turned back by pi / 2^f, k = the pairs, v = token code.
  Matrix qkv0 = matrix("blocks_0_qkv");
  LookBackHead(qkv0, layout.position(), pairs, hd, 1, static_cast<float>(qk_scale(0, kScoreScale)));
  CopyCode(qkv0, 2 * hd, layout.token(), 1.0 / inverse_rms[0]);
  CopyCode(matrix("blocks_0_attn_out"), layout.previous(), 0, 1.0);

  // Layer 1, induction head: q = token code and -16 on the constant first + later, k = previous code
  // and the first-position flag, v = token code.
  Matrix qkv1 = matrix("blocks_1_qkv");
  const double a1 = qk_scale(1, kScoreScale);
  CopyCode(qkv1, 0, layout.token(), a1);
  qkv1[kCodeBits][layout.first()] = qkv1[kCodeBits][layout.later()] = static_cast<float>(-kFirstPenalty * a1);
  CopyCode(qkv1, hd, layout.previous(), a1);
  qkv1[hd + kCodeBits][layout.first()] = static_cast<float>(a1);
  CopyCode(qkv1, 2 * hd, layout.token(), 1.0 / inverse_rms[1]);
  CopyCode(matrix("blocks_1_attn_out"), layout.output(), 0, 1.0);

  // The head reads the output code.
  Matrix head = matrix("head");
  for (int64_t byte = 0; byte < kVocab; ++byte) {
    for (int64_t bit = 0; bit < kCodeBits; ++bit) {
      head[byte][layout.output() + bit] = static_cast<float>(kLogitPerAgreement * Bit(byte, bit) / inverse_rms[2]);
    }
  }
  return model;
}

TrialConfig InductionTrialConfig(int64_t max_length) {
  TrialConfig trial;
  trial.data.seq_len = max_length;
  trial.train.steps = 1;  // a trial must train; the checkpoint is its step 0
  trial.model = InductionModelConfig(max_length);
  ResolveTrialConfig(&trial);
  return trial;
}

StatusOr<std::string> WriteInductionCheckpoint(const std::string& dir, int64_t max_length) {
  const TrialConfig trial = InductionTrialConfig(max_length);
  RUNG_RETURN_IF_ERROR(ValidateTrialConfig(trial));
  Transformer model = MakeInductionModel(max_length);
  const std::unique_ptr<FlatAdamW> optimizer = MakeOptimizer(trial, model);
  return WriteCheckpoint(dir, trial, model, *optimizer, TrainingProgress{}, {});
}

}  // namespace rung::testing_models
