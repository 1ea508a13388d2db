// Learned absolute position embedding: row p of a learned table [n_train, d_model] added to the token
// embedding at position p, no rotation (docs/science.md section 13); its settings are
// position.absolute.
#include <utility>

#include "core/config/json_binding.h"
#include "core/config/positional_variant.h"
#include "core/config/trial_config.h"

namespace rung {
namespace {

class AbsolutePositionVariant final : public PositionalVariant {
 public:
  const char* name() const override { return "absolute"; }
  const char* label() const override { return "learned absolute"; }
  const char* summary() const override {
    return "learned absolute positions: row p of a learned [n_train, d_model] table added to the token "
           "embedding (GPT-2; position.absolute)";
  }
  int listing_order() const override { return 70; }

  std::vector<std::string> own_keys() const override { return {"absolute"}; }
  KeysElsewhere keys_elsewhere() const override { return KeysElsewhere::kWrittenNotReconciled; }
  void Bind(JsonFieldReader& reader, PositionConfig& position) const override { BindBlock(reader, position); }
  void Bind(JsonFieldWriter& writer, PositionConfig& position, bool) const override { BindBlock(writer, position); }
  void ValidateTrial(const TrialConfig& trial, std::vector<ConfigError>* errors) const override {
    if (trial.model.position.absolute.beyond != "refuse") return;
    const std::pair<const char*, const std::vector<int64_t>*> keys[] = {
        {"extrapolation_multiples", &trial.train.extrapolation_multiples},
        {"diagnostics_multiples", &trial.train.diagnostics_multiples}};
    for (const auto& [key, multiples] : keys) {
      for (int64_t multiple : *multiples) {
        if (multiple <= 1) continue;
        errors->push_back({std::string("train.") + key,
                           "multiple " + std::to_string(multiple) +
                               " evaluates beyond the training length, where position.variant absolute has no table "
                               "row and position.absolute.beyond is refuse (set position.absolute.beyond: clamp to "
                               "use the last row there, or keep the multiples at 1)"});
        break;
      }
    }
  }

  // The table [n_train, d_model] is an embedding parameter, not a positional one.
  CheckedInt64 EmbeddingParameters(const ModelConfig& model) const override {
    return CheckedInt64(model.seq_len) * model.d_model;
  }
  std::string FrozenBackboneNote() const override {
    return " besides its position table, an embedding parameter that freezes with the backbone";
  }

 private:
  template <typename V>
  static void BindBlock(V& v, PositionConfig& position) {
    v.Block("absolute", [&](V& a) { a.Enum("beyond", position.absolute.beyond, {"refuse", "clamp"}); });
  }
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT(absolute, rung::AbsolutePositionVariant)
