// Scalable softmax: beta(n) = s_h ln n, s_h learned per layer and head, init 1 / ln n_ref
// (docs/science.md section 3).
#include "core/config/inverse_temperature_form.h"

namespace rung {
namespace {

class ScalableSoftmax final : public InverseTemperatureForm {
 public:
  const char* name() const override { return "ssmax"; }
  const char* label() const override { return "SSMax"; }
  const char* summary() const override {
    return "scalable softmax: beta(n) = s_h ln n, s_h learned per layer and head from 1 / ln n_ref (Nakanishi, 2025)";
  }
  int listing_order() const override { return 40; }
  CheckedInt64 Parameters(const ModelConfig& model) const override { return CheckedInt64(model.layers) * model.heads; }
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_FORM(ssmax, rung::ScalableSoftmax)
