// No inverse temperature: beta(n) = 1 (docs/science.md section 3).
#include "core/config/inverse_temperature_form.h"

namespace rung {
namespace {

class NoTemperature final : public InverseTemperatureForm {
 public:
  const char* name() const override { return "none"; }
  const char* label() const override { return "none"; }
  const char* summary() const override { return "beta(n) = 1: the logits as attention computes them"; }
  int listing_order() const override { return 10; }
  bool IsOne(const InverseTemperatureConfig&) const override { return true; }
  bool ReadsKeyCount() const override { return false; }
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_FORM(none, rung::NoTemperature)
