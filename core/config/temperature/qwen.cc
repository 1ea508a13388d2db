// Qwen's form: beta(n) = max(1, ln n / ln n_ref)^xi (docs/science.md section 3).
#include "core/config/inverse_temperature_form.h"

namespace rung {
namespace {

class QwenTemperature final : public InverseTemperatureForm {
 public:
  const char* name() const override { return "qwen"; }
  const char* label() const override { return "Qwen log-n"; }
  const char* summary() const override {
    return "beta(n) = max(1, ln n / ln n_ref)^xi: 1 up to n_ref, then growing (Qwen's logn attention)";
  }
  int listing_order() const override { return 30; }
  std::vector<std::string> keys() const override { return {"xi"}; }
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_FORM(qwen, rung::QwenTemperature)
