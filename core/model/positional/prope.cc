// p-RoPE's model part: RoPE's frequencies on the fastest floor(p d/2) pairs, 0 on the rest
// (core/config/positional/prope.cc).
#include <cmath>

#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class PartialRopeModel final : public PositionalVariantModel {
 public:
  PartialRopeModel(const ModelConfig& config, torch::nn::Module&, const RotaryBasis& basis)
      : basis_(basis) {
    const int64_t pairs = config.rotary_pairs();
    const int64_t rotating = static_cast<int64_t>(std::floor(config.position.fraction * static_cast<double>(pairs)));
    basis_.mask.narrow(0, rotating, pairs - rotating).zero_();  // the "rotate_mask" buffer itself
  }
  torch::Tensor Frequencies(int64_t) const override { return basis_.RopeFrequencies(); }

 private:
  RotaryBasis basis_;
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(prope, rung::PartialRopeModel)
