#include "core/model/length_extension.h"

#include <algorithm>
#include <cmath>

namespace rung {

torch::Tensor ExtendFrequencies(const torch::Tensor& theta, const LengthExtension& extension, int64_t layer) {
  if (!extension.active()) return theta;
  const double s = extension.scale;
  if (extension.method == "pi") return theta / s;
  const int64_t pairs = theta.size(-1);
  if (extension.method == "dynamic_ntk") {
    if (pairs < 2) return theta;  // d = 2: the one pair is the fastest, kept
    auto f = torch::arange(pairs, theta.options());
    return theta * torch::pow(torch::full({}, s, theta.options()), f * (-2.0 / static_cast<double>(2 * pairs - 2)));
  }
  if (extension.method == "dominant_band") {
    torch::Tensor extended = theta.clone();
    if (extension.dominant_pairs.empty()) return extended;
    const auto& rows = extension.dominant_pairs[static_cast<size_t>(
        std::clamp<int64_t>(layer, 0, static_cast<int64_t>(extension.dominant_pairs.size()) - 1))];
    torch::Tensor table = extended.view({-1, pairs});  // [G, pairs], a view of `extended`
    for (int64_t row = 0; row < table.size(0) && !rows.empty(); ++row) {
      const int64_t pair = rows[static_cast<size_t>(std::min<int64_t>(row, static_cast<int64_t>(rows.size()) - 1))];
      if (pair >= 0 && pair < pairs) table[row][pair].div_(s);
    }
    return extended;
  }
  // ntk_by_parts and yarn: ramp gamma(r) from 0 (r <= alpha: interpolate) to 1 (r >= beta: keep)
  auto turns = theta * (extension.train_length / (2.0 * M_PI));  // r = L / wavelength
  auto keep = ((turns - extension.alpha) / (extension.beta - extension.alpha)).clamp(0.0, 1.0);
  return (1.0 - keep) * theta / s + keep * theta;
}

double ExtensionLogitFactor(const LengthExtension& extension) {
  if (extension.method != "yarn" || !extension.active()) return 1.0;
  const double factor = extension.yarn_c * std::log(extension.scale) + 1.0;
  return factor * factor;
}

}  // namespace rung
