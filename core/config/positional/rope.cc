// RoPE: every pair f of query and key dimensions rotated by position x b^(-2f/d) (docs/science.md
// section 2).
#include "core/config/positional_variant.h"

namespace rung {
namespace {

class RopeVariant final : public PositionalVariant {
 public:
  const char* name() const override { return "rope"; }
  const char* label() const override { return "RoPE"; }
  const char* summary() const override {
    return "rotary position embedding: pair f of queries and keys rotated by n b^(-2f/d) (Su et al., 2021)";
  }
  int listing_order() const override { return 20; }
  bool rotary() const override { return true; }
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT(rope, rung::RopeVariant)
