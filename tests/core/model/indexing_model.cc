#include "tests/core/model/indexing_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <torch/torch.h>

#include "tests/core/model/hand_set_weights.h"

namespace rung::testing_models {
namespace {

constexpr int64_t kVocab = 256;
constexpr int64_t kFirstSlot = 7;             // "arr = [" holds 7 bytes
constexpr int64_t kSlotStride = 3;            // "d, "
constexpr int64_t kIndexBack = 4;             // the index's last digit, "] = " before the last position
constexpr double kScoreScale = 16.0;          // a winning key leads by at least 2 x 16 logits
constexpr double kSlotBonus = 8.0;            // layer 1's score for being a slot, in code agreements
constexpr double kNonSlot = 3.0;              // non-slot rows' entry: 3^2 = the slot code's 8 + flag's 1
constexpr double kLogitPerAgreement = 4.0;    // the head: logit(v) = 4 x agreement with the output code

struct Layout {
  explicit Layout(int64_t max_length) : pairs(PositionPairs(max_length)) {}
  int64_t pairs;
  int64_t token() const { return 0; }
  int64_t constant() const { return kCodeBits; }
  int64_t position() const { return constant() + 1; }
  int64_t slot() const { return position() + 2 * pairs; }
  int64_t slot_flag() const { return slot() + kCodeBits; }
  int64_t non_slot() const { return slot_flag() + 1; }
  int64_t index() const { return non_slot() + 1; }
  int64_t output() const { return index() + kCodeBits; }
  int64_t width() const { return output() + kCodeBits; }
  int64_t head_dim() const { return std::max(2 * pairs, kCodeBits + 1); }
};

}  // namespace

ModelConfig IndexingModelConfig(int64_t max_length) {
  if (max_length < 16 || max_length > kFirstSlot + kSlotStride * 256) {
    throw std::invalid_argument("IndexingModelConfig: max_length must lie in [16, 775]");
  }
  const Layout layout(max_length);
  return HandSetModelConfig(layout.width(), layout.head_dim(), max_length);
}

Transformer MakeIndexingModel(int64_t max_length, int flip) {
  const ModelConfig config = IndexingModelConfig(max_length);
  const Layout layout(max_length);
  const int64_t hd = config.head_dim, pairs = layout.pairs;
  Transformer model = ZeroedModel(config);
  torch::NoGradGuard no_grad;
  auto parameters = model->named_parameters();
  auto matrix = [&](const char* name) { return parameters[name].accessor<float, 2>(); };

  Matrix embedding = matrix("embedding");
  WriteByteCodes(embedding, layout.token());
  Matrix table = matrix("position_embedding");
  for (int64_t j = 0; j < max_length; ++j) {
    table[j][layout.constant()] = 1.0f;
    WritePositionCode(table, j, layout.position(), pairs);
    if (j >= kFirstSlot && (j - kFirstSlot) % kSlotStride == 0) {
      const int64_t element = (j - kFirstSlot) / kSlotStride;
      for (int64_t bit = 0; bit < kCodeBits; ++bit) table[j][layout.slot() + bit] = Bit(element, bit);
      table[j][layout.slot_flag()] = 1.0f;
    } else {
      table[j][layout.non_slot()] = static_cast<float>(kNonSlot);
    }
  }

  // As in induction_model.cc: q and k both scaled by qk_scale(layer, s) make the score s x (q . k of
  // the unnormed codes). Rows from position 4 on have these squared norms (earlier rows are no slot).
  const double query_constant = 1.0 / std::sqrt(static_cast<double>(hd));
  const double codes = static_cast<double>(kCodeBits);
  const double input_squared = codes + 1.0 + static_cast<double>(pairs) + kNonSlot * kNonSlot;
  const double inverse_rms[] = {InverseRms(input_squared, config), InverseRms(input_squared + codes, config),
                                InverseRms(input_squared + 2 * codes, config)};
  auto qk_scale = [&](int64_t layer, double scale) { return std::sqrt(scale / query_constant) / inverse_rms[layer]; };

  // Layer 0: the token 4 positions back into "index".
  Matrix qkv0 = matrix("blocks_0_qkv");
  LookBackHead(qkv0, layout.position(), pairs, hd, kIndexBack, static_cast<float>(qk_scale(0, kScoreScale)));
  CopyCode(qkv0, 2 * hd, layout.token(), 1.0 / inverse_rms[0]);
  CopyCode(matrix("blocks_0_attn_out"), layout.index(), 0, 1.0);

  // Layer 1: the index digit as a number against each slot's element code; the slot's token into "output".
  Matrix qkv1 = matrix("blocks_1_qkv");
  const double a1 = qk_scale(1, kScoreScale);
  for (int64_t bit = 0; bit < kCodeBits; ++bit) {
    const bool negated = bit == 4 || bit == 5 || (bit == 0 && flip == 1);
    qkv1[bit][layout.index() + bit] = static_cast<float>(negated ? -a1 : a1);
    qkv1[hd + bit][layout.slot() + bit] = static_cast<float>(a1);
  }
  qkv1[kCodeBits][layout.constant()] = static_cast<float>(kSlotBonus * a1);
  qkv1[hd + kCodeBits][layout.slot_flag()] = static_cast<float>(a1);
  CopyCode(qkv1, 2 * hd, layout.token(), 1.0 / inverse_rms[1]);
  CopyCode(matrix("blocks_1_attn_out"), layout.output(), 0, 1.0);

  Matrix head = matrix("head");
  for (int64_t byte = 0; byte < kVocab; ++byte) {
    for (int64_t bit = 0; bit < kCodeBits; ++bit) {
      head[byte][layout.output() + bit] = static_cast<float>(kLogitPerAgreement * Bit(byte, bit) / inverse_rms[2]);
    }
  }
  return model;
}

TrialConfig IndexingTrialConfig(int64_t max_length, const std::vector<int64_t>& elements) {
  TrialConfig trial;
  trial.data.seq_len = max_length;
  trial.train.steps = 0;
  trial.train.init.checkpoint = "(set by hand)";
  trial.model = IndexingModelConfig(max_length);
  ProbeConfig& probe = trial.train.probe;
  probe.kind = "indexing";
  probe.elements = elements;
  probe.instances = 10;
  probe.queries = 10;
  probe.score = "choice";
  ResolveTrialConfig(&trial);
  return trial;
}

}  // namespace rung::testing_models
