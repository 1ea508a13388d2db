// No length extension: the frequencies as trained (docs/science.md section 9).
#include "core/config/length_extension_method.h"

namespace rung {
namespace {

class NoExtension final : public LengthExtensionMethod {
 public:
  const char* name() const override { return "none"; }
  const char* label() const override { return "none"; }
  const char* summary() const override { return "the frequencies as trained: the plain evaluation beyond the training length"; }
  int listing_order() const override { return 10; }
  bool keeps_frequencies() const override { return true; }
};

}  // namespace
}  // namespace rung

RUNG_LENGTH_EXTENSION_METHOD(none, rung::NoExtension)
