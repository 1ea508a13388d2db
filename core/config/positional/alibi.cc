// ALiBi: no rotation; each head's logits get -m_h (i - j), slopes of the standard geometric set
// (docs/science.md section 2).
#include "core/config/positional_variant.h"

namespace rung {
namespace {

class AlibiVariant final : public PositionalVariant {
 public:
  const char* name() const override { return "alibi"; }
  const char* label() const override { return "ALiBi"; }
  const char* summary() const override {
    return "attention with linear biases: head h's logits get -m_h (i - j), geometric slopes (Press et al., 2022)";
  }
  int listing_order() const override { return 60; }
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT(alibi, rung::AlibiVariant)
