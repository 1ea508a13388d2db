// Dynamic NTK: the base rescaled for the evaluated length, b' = b s^(d/(d-2)) (docs/science.md
// section 9).
#include "core/config/length_extension_method.h"

namespace rung {
namespace {

class DynamicNtk final : public LengthExtensionMethod {
 public:
  const char* name() const override { return "dynamic_ntk"; }
  const char* label() const override { return "dynamic NTK"; }
  const char* summary() const override {
    return "the base rescaled for the evaluated length, b' = b s^(d/(d-2)): pair f's theta times s^(-2f/(d-2))";
  }
  int listing_order() const override { return 50; }
};

}  // namespace
}  // namespace rung

RUNG_LENGTH_EXTENSION_METHOD(dynamic_ntk, rung::DynamicNtk)
