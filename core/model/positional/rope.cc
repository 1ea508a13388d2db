// RoPE's model part: the constant frequencies b^(-2f/d) (core/config/positional/rope.cc).
#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class RopeModel final : public PositionalVariantModel {
 public:
  RopeModel(const ModelConfig&, torch::nn::Module&, const RotaryBasis& basis) : basis_(basis) {}
  torch::Tensor Frequencies(int64_t) const override { return basis_.RopeFrequencies(); }

 private:
  RotaryBasis basis_;
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(rope, rung::RopeModel)
