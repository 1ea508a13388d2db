// Dynamic NTK's model part: pair f's theta times s^(-2f/(d-2)), the base b s^(d/(d-2))
// (core/config/extension/dynamic_ntk.cc).
#include "core/model/frequency_extension.h"

namespace rung {
namespace {

class DynamicNtkFrequencyExtension final : public FrequencyExtension {
 public:
  const char* name() const override { return "dynamic_ntk"; }
  torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension&,
                       int64_t) const override {
    const int64_t pairs = theta.size(-1);
    if (pairs < 2) return theta * torch::ones_like(s);  // d = 2: the one pair is the fastest, kept
    auto f = torch::arange(pairs, theta.options());
    return theta * torch::pow(s, f * (-2.0 / static_cast<double>(2 * pairs - 2)));
  }
};

}  // namespace
}  // namespace rung

RUNG_FREQUENCY_EXTENSION(dynamic_ntk, rung::DynamicNtkFrequencyExtension)
