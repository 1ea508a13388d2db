// Scalable softmax's model part: s_h ln n with s ("s" [layers, heads]) learned from 1 / ln n_ref
// (core/config/temperature/ssmax.cc).
#include <cmath>

#include "core/model/inverse_temperature_form_model.h"

namespace rung {
namespace {

class ScalableSoftmaxModel final : public InverseTemperatureFormModel {
 public:
  ScalableSoftmaxModel(const ModelConfig& config, torch::nn::Module& owner) : layers_(config.layers) {
    scale_ = owner.register_parameter(
        "s", torch::full({config.layers, config.heads}, 1.0 / std::log(config.inverse_temperature.n_ref), torch::kFloat));
  }
  std::vector<torch::Tensor> Multipliers(const torch::Tensor& keys) override {
    const torch::Tensor log_n = keys.to(torch::kFloat).log().unsqueeze(-1);
    std::vector<torch::Tensor> out(layers_);
    for (int64_t layer = 0; layer < layers_; ++layer) out[layer] = log_n * scale_[layer].to(keys.device());
    return out;
  }
  std::vector<torch::Tensor> learned_parameters() const override { return {scale_}; }

 private:
  int64_t layers_;
  torch::Tensor scale_;  // [layers, heads]
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_MODEL(ssmax, rung::ScalableSoftmaxModel)
