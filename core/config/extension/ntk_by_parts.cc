// NTK-by-parts: pairs that turn often over the training length kept, slow ones interpolated, a ramp
// between (docs/science.md section 9).
#include "core/config/length_extension_method.h"

namespace rung {
namespace {

class NtkByParts final : public LengthExtensionMethod {
 public:
  const char* name() const override { return "ntk_by_parts"; }
  const char* label() const override { return "NTK-by-parts"; }
  const char* summary() const override {
    return "pairs turning more than 32 times over the training length kept, fewer than once interpolated "
           "(theta / s), a linear ramp between (Peng et al., 2023)";
  }
  int listing_order() const override { return 30; }
};

}  // namespace
}  // namespace rung

RUNG_LENGTH_EXTENSION_METHOD(ntk_by_parts, rung::NtkByParts)
