// ALiBi's model part: the slopes m_h ("alibi_slopes" buffer), no rotation (core/config/positional/alibi.cc).
#include "core/model/positional_encoding.h"
#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class AlibiModel final : public PositionalVariantModel {
 public:
  AlibiModel(const ModelConfig& config, torch::nn::Module& owner, const RotaryBasis&) {
    slopes_ = owner.register_buffer(
        "alibi_slopes", torch::tensor(AlibiSlopes(config.heads), torch::kDouble).to(torch::kFloat));
  }
  torch::Tensor LinearBiasSlopes() const override { return slopes_; }

 private:
  torch::Tensor slopes_;
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(alibi, rung::AlibiModel)
