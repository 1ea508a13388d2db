// YaRN as its reference code and Hugging Face transformers compute it (docs/science.md section 9): the
// ramp linear in the pair index, the attention factor on q and k. What a model folder's
// rope_scaling {"rope_type": "yarn"} means.
#include "core/config/length_extension_method.h"

namespace rung {
namespace {

class YarnHf final : public LengthExtensionMethod {
 public:
  const char* name() const override { return "yarn_hf"; }
  const char* label() const override { return "YaRN (transformers)"; }
  const char* summary() const override {
    return "as its code and transformers compute it: the ramp linear in the pair index between the "
           "correction dimensions of 32 and 1 turns, logits times (0.1 ln s + 1)^2 (Peng et al., 2023)";
  }
  int listing_order() const override { return 45; }
};

}  // namespace
}  // namespace rung

RUNG_LENGTH_EXTENSION_METHOD(yarn_hf, rung::YarnHf)
