// The learned form: beta(n) = s_lh beta[n] + b_lh, beta[1..n_train] learned; beyond n_train held or
// continued as a power law of ln n (inverse_temperature.extend; docs/science.md section 3).
#include "core/config/inverse_temperature_form.h"

namespace rung {
namespace {

class LearnedTemperature final : public InverseTemperatureForm {
 public:
  const char* name() const override { return "learned"; }
  const char* label() const override { return "learned"; }
  const char* summary() const override {
    return "beta(n) = s beta[n] + b per layer and head, beta[1..n_train] learned; beyond n_train held or a power law "
           "of ln n (extend)";
  }
  int listing_order() const override { return 50; }
  std::vector<std::string> keys() const override { return {"extend"}; }
  CheckedInt64 Parameters(const ModelConfig& model) const override {
    return model.seq_len + CheckedInt64(2) * model.layers * model.heads;
  }
  bool TrainsWithFrozenBackbone() const override { return true; }
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_FORM(learned, rung::LearnedTemperature)
