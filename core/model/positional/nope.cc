// NoPE's model part: nothing (core/config/positional/nope.cc).
#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class NopeModel final : public PositionalVariantModel {
 public:
  NopeModel(const ModelConfig&, torch::nn::Module&, const RotaryBasis&) {}
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(nope, rung::NopeModel)
