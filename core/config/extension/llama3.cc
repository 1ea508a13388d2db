// Llama 3.1's rope_scaling (docs/science.md section 9): NTK-by-parts with the ramp between 1 and 4
// turns over the original length.
#include "core/config/length_extension_method.h"

namespace rung {
namespace {

class Llama3 final : public LengthExtensionMethod {
 public:
  const char* name() const override { return "llama3"; }
  const char* label() const override { return "Llama 3.1"; }
  const char* summary() const override {
    return "pairs turning more than high_freq_factor (4) times over the original length kept, fewer than "
           "low_freq_factor (1) interpolated (theta / s), a linear ramp between (Meta, 2024)";
  }
  int listing_order() const override { return 55; }
};

}  // namespace
}  // namespace rung

RUNG_LENGTH_EXTENSION_METHOD(llama3, rung::Llama3)
