// YaRN's model part as transformers' _compute_yarn_parameters computes it (core/config/extension/yarn_hf.cc):
//   correction dim of n turns  D(n) = d ln(L / (2 pi n)) / (2 ln b)     (d = 2 x pairs, L = train_length)
//   low = max(floor D(beta), 0), high = min(ceil D(alpha), d - 1)         (no floor/ceil unless truncate)
//   ramp_i = clamp((i - low) / (high - low), 0, 1)                       (high += 0.001 where equal)
//   theta'_i = theta_i / s * ramp_i + theta_i * (1 - ramp_i)
// and q and k multiplied by the attention factor a (attention_factor, or 0.1 ln s + 1; 1 for s <= 1),
// the logits by a^2.
#include <cmath>

#include "core/model/frequency_extension.h"

namespace rung {
namespace {

double DefaultAttentionFactor(double scale) { return scale <= 1.0 ? 1.0 : 0.1 * std::log(scale) + 1.0; }

class YarnHfFrequencyExtension final : public FrequencyExtension {
 public:
  const char* name() const override { return "yarn_hf"; }
  torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension& extension,
                       int64_t) const override {
    const int64_t pairs = theta.size(-1);
    const double dims = 2.0 * static_cast<double>(pairs);
    auto correction_dim = [&](double turns) {
      return dims * std::log(extension.train_length / (turns * 2.0 * M_PI)) / (2.0 * std::log(extension.rope_base));
    };
    double low = correction_dim(extension.beta), high = correction_dim(extension.alpha);
    if (extension.truncate) low = std::floor(low), high = std::ceil(high);
    low = std::max(low, 0.0);
    high = std::min(high, dims - 1.0);
    if (low == high) high += 0.001;
    const torch::Tensor index = torch::arange(pairs, theta.options());
    const torch::Tensor ramp = ((index - low) / (high - low)).clamp(0.0, 1.0);
    return theta / s * ramp + theta * (1.0 - ramp);
  }
  bool has_logit_factor() const override { return true; }
  double LogitFactor(double scale, const LengthExtension& extension) const override {
    const double factor = extension.attention_factor > 0.0 ? extension.attention_factor : DefaultAttentionFactor(scale);
    return factor * factor;
  }
  torch::Tensor LogitFactorAt(const torch::Tensor& scales, const LengthExtension& extension) const override {
    if (extension.attention_factor > 0.0) return torch::full_like(scales, extension.attention_factor * extension.attention_factor);
    const torch::Tensor factor = torch::where(scales > 1.0, 0.1 * scales.clamp_min(1.0).log() + 1.0, torch::ones_like(scales));
    return factor * factor;
  }
};

}  // namespace
}  // namespace rung

RUNG_FREQUENCY_EXTENSION(yarn_hf, rung::YarnHfFrequencyExtension)
