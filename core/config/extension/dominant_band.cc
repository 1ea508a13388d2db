// Dominant-band interpolation: only each frequency row's dominant pair interpolated (docs/science.md
// section 9; LeRoPE's).
#include "core/config/length_extension_method.h"

namespace rung {
namespace {

class DominantBand final : public LengthExtensionMethod {
 public:
  const char* name() const override { return "dominant_band"; }
  const char* label() const override { return "dominant band"; }
  const char* summary() const override {
    return "only each frequency row's dominant pair (measured at the training length) interpolated, theta / s; "
           "every other pair kept (LeRoPE)";
  }
  int listing_order() const override { return 60; }
  bool needs_dominant_pairs() const override { return true; }
};

}  // namespace
}  // namespace rung

RUNG_LENGTH_EXTENSION_METHOD(dominant_band, rung::DominantBand)
