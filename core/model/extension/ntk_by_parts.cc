// NTK-by-parts' model part (core/config/extension/ntk_by_parts.cc).
#include "core/model/frequency_extension.h"

namespace rung {
namespace {

class NtkByPartsFrequencyExtension final : public FrequencyExtension {
 public:
  const char* name() const override { return "ntk_by_parts"; }
  torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension& extension,
                       int64_t) const override {
    return NtkByPartsFrequencies(theta, s, extension);
  }
};

}  // namespace
}  // namespace rung

RUNG_FREQUENCY_EXTENSION(ntk_by_parts, rung::NtkByPartsFrequencyExtension)
