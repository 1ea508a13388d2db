// LeRoPE's model part: the learned log-scales a [d/2] ("lerope_log_scale", init 0), theta_f =
// exp(a_f) b^(-2f/d) for every layer and head (core/config/positional/lerope.cc).
#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class LeRopeModel final : public PositionalVariantModel {
 public:
  LeRopeModel(const ModelConfig& config, torch::nn::Module& owner, const RotaryBasis& basis)
      : basis_(basis), pairs_(config.rotary_pairs()) {
    log_scale_ = owner.register_parameter("lerope_log_scale", torch::zeros({pairs_}, torch::kFloat));
  }
  Schedule schedule() const override { return Schedule::kShared; }
  torch::Tensor Frequencies(int64_t) const override { return (log_scale_ + basis_.log_freq).exp().view({1, pairs_}); }
  std::vector<torch::Tensor> scale_parameters() const override { return {log_scale_}; }

 private:
  RotaryBasis basis_;
  int64_t pairs_;
  torch::Tensor log_scale_;
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(lerope, rung::LeRopeModel)
