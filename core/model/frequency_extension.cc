#include "core/model/frequency_extension.h"

#include <cmath>

#include "core/config/registry.h"

namespace rung {

// The generated list (cmake/registry_list.cmake): one entry per core/model/extension/*.cc.
std::vector<const FrequencyExtension*> RegisteredFrequencyExtensions();

double FrequencyExtension::LogitFactor(double, const LengthExtension&) const { return 1.0; }

torch::Tensor FrequencyExtension::LogitFactorAt(const torch::Tensor& scales, const LengthExtension&) const {
  return torch::ones_like(scales);
}

const FrequencyExtension& FrequencyExtensionFor(const std::string& method) {
  static const std::vector<const FrequencyExtension*> extensions = RegisteredFrequencyExtensions();
  const FrequencyExtension* extension = FindNamed(extensions, method);
  TORCH_CHECK(extension != nullptr, "length-extension method '", method, "' has no model part in this build");
  return *extension;
}

std::vector<std::string> FrequencyExtensionNames() { return NamesOf(RegisteredFrequencyExtensions()); }

torch::Tensor NtkByPartsFrequencies(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension& extension) {
  // ramp gamma(r) from 0 (r <= alpha: interpolate) to 1 (r >= beta: keep)
  auto turns = theta * (extension.train_length / (2.0 * M_PI));  // r = L / wavelength
  auto keep = ((turns - extension.alpha) / (extension.beta - extension.alpha)).clamp(0.0, 1.0);
  return (1.0 - keep) * theta / s + keep * theta;
}

}  // namespace rung
