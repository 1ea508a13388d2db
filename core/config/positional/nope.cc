// NoPE: no positional encoding; causal attention alone carries order (docs/science.md section 2).
#include "core/config/positional_variant.h"

namespace rung {
namespace {

class NopeVariant final : public PositionalVariant {
 public:
  const char* name() const override { return "nope"; }
  const char* label() const override { return "NoPE"; }
  const char* summary() const override {
    return "no positional encoding: the causal mask alone carries order (Kazemnejad et al., 2023)";
  }
  int listing_order() const override { return 10; }
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT(nope, rung::NopeVariant)
