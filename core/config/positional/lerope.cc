// LeRoPE: RoPE with a learned log-scale a_f per pair, shared by every layer and head:
// theta_f = exp(a_f) b^(-2f/d), a = 0 at init (docs/science.md section 2).
#include "core/config/positional_variant.h"

namespace rung {
namespace {

class LeRopeVariant final : public PositionalVariant {
 public:
  const char* name() const override { return "lerope"; }
  const char* label() const override { return "LeRoPE"; }
  const char* summary() const override {
    return "learned RoPE: theta_f = exp(a_f) b^(-2f/d), one learned a_f per pair shared by all layers and heads";
  }
  int listing_order() const override { return 40; }
  // Its log-scales start at 0: every pair at RoPE's frequency.
  bool StartsAsRope(const PositionConfig&) const override { return true; }
  bool rotary() const override { return true; }
  CheckedInt64 PositionalParameters(const ModelConfig& model) const override {
    return CheckedInt64(model.rotary_pairs());
  }
  bool LearnsPairFrequencies(const PositionConfig&) const override { return true; }
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT(lerope, rung::LeRopeVariant)
