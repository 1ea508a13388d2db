// YaRN: NTK-by-parts and the logit factor (c ln s + 1)^2 (docs/science.md section 9).
#include "core/config/length_extension_method.h"

namespace rung {
namespace {

class Yarn final : public LengthExtensionMethod {
 public:
  const char* name() const override { return "yarn"; }
  const char* label() const override { return "YaRN"; }
  const char* summary() const override {
    return "NTK-by-parts plus the logit factor (c ln s + 1)^2, c = train.extrapolation_yarn_c (Peng et al., 2023)";
  }
  int listing_order() const override { return 40; }
};

}  // namespace
}  // namespace rung

RUNG_LENGTH_EXTENSION_METHOD(yarn, rung::Yarn)
