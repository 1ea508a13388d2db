// The log-power form's model part: s (ln max(n, 2) / ln n_ref)^xi, with s ("s" [layers, heads]) learned
// when learn_s (core/config/temperature/log_power.cc).
#include <cmath>

#include "core/model/inverse_temperature_form_model.h"

namespace rung {
namespace {

class LogPowerModel final : public InverseTemperatureFormModel {
 public:
  LogPowerModel(const ModelConfig& config, torch::nn::Module& owner) : config_(config) {
    const InverseTemperatureConfig& t = config.inverse_temperature;
    if (t.learn_s) {
      scale_ = owner.register_parameter("s", torch::full({config.layers, config.heads}, t.s, torch::kFloat));
    }
  }
  std::vector<torch::Tensor> Multipliers(const torch::Tensor& keys) override {
    const InverseTemperatureConfig& t = config_.inverse_temperature;
    const torch::Tensor n = keys.to(torch::kFloat);
    const torch::Tensor base = torch::pow(n.clamp_min(2.0).log() / std::log(t.n_ref), t.xi);
    std::vector<torch::Tensor> out(config_.layers);
    if (scale_.defined()) {
      for (int64_t layer = 0; layer < config_.layers; ++layer) out[layer] = base.unsqueeze(-1) * scale_[layer].to(keys.device());
      return out;
    }
    std::vector<int64_t> shape = n.sizes().vec();
    shape.push_back(config_.heads);
    const torch::Tensor shared = (base * t.s).unsqueeze(-1).expand(shape).contiguous();
    for (auto& layer : out) layer = shared;
    return out;
  }
  std::vector<torch::Tensor> learned_parameters() const override {
    return scale_.defined() ? std::vector<torch::Tensor>{scale_} : std::vector<torch::Tensor>{};
  }

 private:
  ModelConfig config_;
  torch::Tensor scale_;  // [layers, heads] when learned
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_MODEL(log_power, rung::LogPowerModel)
