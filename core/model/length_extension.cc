#include "core/model/length_extension.h"

#include <algorithm>
#include <cmath>

namespace rung {

torch::Tensor ExtendFrequencies(const torch::Tensor& theta, const LengthExtension& extension, int64_t layer) {
  if (!extension.active()) return theta;
  return ExtendFrequenciesAt(theta, torch::full({}, extension.scale, theta.options()), extension, layer);
}

torch::Tensor ExtendFrequenciesAt(const torch::Tensor& theta, const torch::Tensor& scales,
                                  const LengthExtension& extension, int64_t layer) {
  // s broadcast over theta's dimensions: [S..., 1, ..., 1].
  std::vector<int64_t> shape = scales.sizes().vec();
  for (int64_t d = 0; d < theta.dim(); ++d) shape.push_back(1);
  const torch::Tensor s = scales.to(theta.options()).reshape(shape);
  const int64_t pairs = theta.size(-1);
  if (extension.method == "none") return theta * torch::ones_like(s);
  if (extension.method == "pi") return theta / s;
  if (extension.method == "dynamic_ntk") {
    if (pairs < 2) return theta * torch::ones_like(s);  // d = 2: the one pair is the fastest, kept
    auto f = torch::arange(pairs, theta.options());
    return theta * torch::pow(s, f * (-2.0 / static_cast<double>(2 * pairs - 2)));
  }
  if (extension.method == "dominant_band") {
    // 1 at each frequency row's dominant pair: theta there divided by s, every other pair kept.
    torch::Tensor mask = torch::zeros_like(theta);
    if (!extension.dominant_pairs.empty()) {
      const auto& rows = extension.dominant_pairs[static_cast<size_t>(
          std::clamp<int64_t>(layer, 0, static_cast<int64_t>(extension.dominant_pairs.size()) - 1))];
      torch::Tensor table = mask.view({-1, pairs});  // [G, pairs], a view of `mask`
      for (int64_t row = 0; row < table.size(0) && !rows.empty(); ++row) {
        const int64_t pair = rows[static_cast<size_t>(std::min<int64_t>(row, static_cast<int64_t>(rows.size()) - 1))];
        if (pair >= 0 && pair < pairs) table[row][pair].fill_(1.0);
      }
    }
    return theta * (1.0 - mask + mask / s);
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

torch::Tensor ExtensionLogitFactorAt(const torch::Tensor& scales, const LengthExtension& extension) {
  if (extension.method != "yarn") return torch::ones_like(scales);
  const torch::Tensor factor = extension.yarn_c * scales.clamp_min(1.0).log() + 1.0;
  return factor * factor;
}

torch::Tensor DocumentScales(const torch::Tensor& doc_start, double train_length) {
  // Positions of one document share its start: the count of a start in the row is that document's span.
  const torch::Tensor starts = doc_start.to(torch::kLong);
  const torch::Tensor counts =
      torch::zeros(starts.sizes(), torch::TensorOptions().dtype(torch::kFloat).device(starts.device()))
          .scatter_add_(1, starts, torch::ones(starts.sizes(), torch::TensorOptions().dtype(torch::kFloat).device(starts.device())));
  return (counts.gather(1, starts) / static_cast<float>(train_length)).clamp_min(1.0);
}

}  // namespace rung
