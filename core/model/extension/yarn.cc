// YaRN's model part: NTK-by-parts' frequencies and the logit factor (c ln s + 1)^2
// (core/config/extension/yarn.cc).
#include <cmath>

#include "core/model/frequency_extension.h"

namespace rung {
namespace {

class YarnFrequencyExtension final : public FrequencyExtension {
 public:
  const char* name() const override { return "yarn"; }
  torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension& extension,
                       int64_t) const override {
    return NtkByPartsFrequencies(theta, s, extension);
  }
  bool has_logit_factor() const override { return true; }
  double LogitFactor(double scale, const LengthExtension& extension) const override {
    const double factor = extension.yarn_c * std::log(scale) + 1.0;
    return factor * factor;
  }
  torch::Tensor LogitFactorAt(const torch::Tensor& scales, const LengthExtension& extension) const override {
    const torch::Tensor factor = extension.yarn_c * scales.clamp_min(1.0).log() + 1.0;
    return factor * factor;
  }
};

}  // namespace
}  // namespace rung

RUNG_FREQUENCY_EXTENSION(yarn, rung::YarnFrequencyExtension)
