// Dominant-band interpolation's model part: theta / s at each frequency row's dominant pair
// (LengthExtension::dominant_pairs), every other pair kept (core/config/extension/dominant_band.cc).
#include <algorithm>

#include "core/model/frequency_extension.h"

namespace rung {
namespace {

class DominantBandFrequencyExtension final : public FrequencyExtension {
 public:
  const char* name() const override { return "dominant_band"; }
  torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension& extension,
                       int64_t layer) const override {
    const int64_t pairs = theta.size(-1);
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
};

}  // namespace
}  // namespace rung

RUNG_FREQUENCY_EXTENSION(dominant_band, rung::DominantBandFrequencyExtension)
