// No length extension's model part: the frequencies as trained (core/config/extension/none.cc).
#include "core/model/frequency_extension.h"

namespace rung {
namespace {

class KeptFrequencies final : public FrequencyExtension {
 public:
  const char* name() const override { return "none"; }
  torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension&,
                       int64_t) const override {
    return theta * torch::ones_like(s);
  }
};

}  // namespace
}  // namespace rung

RUNG_FREQUENCY_EXTENSION(none, rung::KeptFrequencies)
