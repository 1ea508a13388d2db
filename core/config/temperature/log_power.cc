// The log-power form: beta(n) = s (ln max(n, 2) / ln n_ref)^xi, s fixed or learned per layer and head
// (docs/science.md section 3).
#include "core/config/inverse_temperature_form.h"

namespace rung {
namespace {

class LogPowerTemperature final : public InverseTemperatureForm {
 public:
  const char* name() const override { return "log_power"; }
  const char* label() const override { return "log-power"; }
  const char* summary() const override {
    return "beta(n) = s (ln max(n, 2) / ln n_ref)^xi; s fixed, or learned per layer and head (learn_s)";
  }
  int listing_order() const override { return 20; }
  std::vector<std::string> keys() const override { return {"xi", "s", "learn_s"}; }
  bool IsOne(const InverseTemperatureConfig& t) const override { return t.xi == 0.0 && !t.learn_s && t.s == 1.0; }
  CheckedInt64 Parameters(const ModelConfig& model) const override {
    return model.inverse_temperature.learn_s ? CheckedInt64(model.layers) * model.heads : CheckedInt64(0);
  }
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_FORM(log_power, rung::LogPowerTemperature)
