// Position interpolation's model part: theta / s (core/config/extension/pi.cc).
#include "core/model/frequency_extension.h"

namespace rung {
namespace {

class InterpolatedFrequencies final : public FrequencyExtension {
 public:
  const char* name() const override { return "pi"; }
  torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension&,
                       int64_t) const override {
    return theta / s;
  }
};

}  // namespace
}  // namespace rung

RUNG_FREQUENCY_EXTENSION(pi, rung::InterpolatedFrequencies)
