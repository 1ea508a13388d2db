// Llama 3.1's model part: NTK-by-parts with alpha = low_freq_factor, beta = high_freq_factor
// (core/config/extension/llama3.cc).
#include "core/model/frequency_extension.h"

namespace rung {
namespace {

class Llama3FrequencyExtension final : public FrequencyExtension {
 public:
  const char* name() const override { return "llama3"; }
  torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension& extension,
                       int64_t) const override {
    LengthExtension ramp = extension;
    ramp.alpha = extension.low_freq_factor;
    ramp.beta = extension.high_freq_factor;
    return NtkByPartsFrequencies(theta, s, ramp);
  }
};

}  // namespace
}  // namespace rung

RUNG_FREQUENCY_EXTENSION(llama3, rung::Llama3FrequencyExtension)
