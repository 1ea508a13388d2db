// Position interpolation: every frequency divided by the scale s (docs/science.md section 9).
#include "core/config/length_extension_method.h"

namespace rung {
namespace {

class PositionInterpolation final : public LengthExtensionMethod {
 public:
  const char* name() const override { return "pi"; }
  const char* label() const override { return "PI"; }
  const char* summary() const override {
    return "position interpolation: theta / s for every pair (Chen et al., 2023)";
  }
  int listing_order() const override { return 20; }
};

}  // namespace
}  // namespace rung

RUNG_LENGTH_EXTENSION_METHOD(pi, rung::PositionInterpolation)
