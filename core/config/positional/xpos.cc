// xPos (Sun et al., 2023, "A Length-Extrapolatable Transformer"): RoPE whose pair f also decays the
// logit q_n . k_m by zeta_f^((n - m)/gamma), zeta_f = (2f/d + r)/(1 + r) (docs/science.md section 2,
// "xPos"); its settings are position.xpos.scale_base (gamma, 512) and position.xpos.rate (r, 0.4).
#include "core/config/json_binding.h"
#include "core/config/positional_variant.h"

namespace rung {
namespace {

class XposVariant final : public PositionalVariant {
 public:
  const char* name() const override { return "xpos"; }
  const char* label() const override { return "xPos"; }
  const char* summary() const override {
    return "extrapolatable RoPE: pair f of q.k also decays as zeta_f^((n-m)/gamma), zeta_f = (2f/d + r)/(1 + r) "
           "(Sun et al., 2023; position.xpos)";
  }
  int listing_order() const override { return 80; }
  bool rotary() const override { return true; }

  std::vector<std::string> own_keys() const override { return {"xpos"}; }
  const BlockSettings* block_settings() const override { return &settings_; }
  void Bind(JsonFieldReader& reader, PositionConfig& position) const override { settings_.Bind(reader, position); }
  void Bind(JsonFieldWriter& writer, PositionConfig& position, bool chosen) const override {
    if (chosen) settings_.Bind(writer, position);
  }
  void ValidateSettings(const PositionConfig& position, std::vector<ConfigError>* errors) const override {
    const VariantSettings& settings = settings_.Of(position);
    if (!(settings.reals.at("scale_base") > 0.0)) {
      errors->push_back({"position.xpos.scale_base", "must be positive (the paper's gamma is 512)"});
    }
    if (!(settings.reals.at("rate") > 0.0)) {
      errors->push_back({"position.xpos.rate", "must be positive (the paper's is 0.4): zeta_f lies in (0, 1]"});
    }
  }

 private:
  const BlockSettings settings_{"xpos", VariantSettings{{{"scale_base", 512.0}, {"rate", 0.4}}, {}, {}}};
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT(xpos, rung::XposVariant)
