// RoPE's model part: the constant frequencies b^(-2f/d) (core/config/positional/rope.cc).
#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class RopeModel final : public PositionalVariantModel {
 public:
  RopeModel(const ModelConfig& config, torch::nn::Module&, const RotaryBasis& basis)
      : basis_(basis), pairs_(config.rotary_pairs()) {}
  torch::Tensor Frequencies(int64_t) const override { return (basis_.log_freq.exp() * basis_.mask).view({1, pairs_}); }

 private:
  RotaryBasis basis_;
  int64_t pairs_;
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(rope, rung::RopeModel)
