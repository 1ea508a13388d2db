#include "core/model/length_extension.h"

#include <cmath>

namespace rung {

torch::Tensor ExtendFrequencies(const torch::Tensor& theta, const LengthExtension& extension) {
  if (!extension.active()) return theta;
  const double s = extension.scale;
  if (extension.method == "pi") return theta / s;
  // ntk_by_parts and yarn: ramp gamma(r) from 0 (r <= alpha: interpolate) to 1 (r >= beta: keep)
  auto turns = theta * (extension.train_length / (2.0 * M_PI));  // r = L / wavelength
  auto keep = ((turns - extension.alpha) / (extension.beta - extension.alpha)).clamp(0.0, 1.0);
  return (1.0 - keep) * theta / s + keep * theta;
}

double ExtensionLogitFactor(const LengthExtension& extension) {
  if (extension.method != "yarn" || !extension.active()) return 1.0;
  const double factor = 0.1 * std::log(extension.scale) + 1.0;
  return factor * factor;
}

}  // namespace rung
