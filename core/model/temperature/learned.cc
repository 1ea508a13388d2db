// The learned form's model part (core/config/temperature/learned.cc): beta[1..n_train] ("beta", init 1)
// and per layer and head s ("s", init 1) and b ("b", init 0), beta(n) = s beta[n] + b; beyond n_train
// beta holds its last value ("hold") or follows c (ln n)^k fitted by least squares to its second half
// ("power_law").
#include <algorithm>

#include "core/model/inverse_temperature_form_model.h"

namespace rung {
namespace {

class LearnedTemperatureModel final : public InverseTemperatureFormModel {
 public:
  LearnedTemperatureModel(const ModelConfig& config, torch::nn::Module& owner) : config_(config) {
    beta_ = owner.register_parameter("beta", torch::ones({config.seq_len}, torch::kFloat));
    scale_ = owner.register_parameter("s", torch::ones({config.layers, config.heads}, torch::kFloat));
    offset_ = owner.register_parameter("b", torch::zeros({config.layers, config.heads}, torch::kFloat));
  }

  std::vector<torch::Tensor> Multipliers(const torch::Tensor& keys) override {
    const torch::Device device = keys.device();
    const torch::Tensor n = keys.to(torch::kFloat);
    // beta[n], the table extended to the largest n seen
    const int64_t largest = static_cast<int64_t>(n.max().item<float>());
    torch::Tensor table = Beta(std::max<int64_t>(largest, 1), device);
    torch::Tensor index = (n.to(torch::kLong) - 1).clamp_min(0);
    torch::Tensor beta = table.index_select(0, index.reshape({-1})).view(n.sizes()).unsqueeze(-1);  // [..., 1]
    std::vector<torch::Tensor> out(config_.layers);
    for (int64_t layer = 0; layer < config_.layers; ++layer) {
      out[layer] = beta * scale_[layer].to(device) + offset_[layer].to(device);
    }
    return out;
  }
  std::vector<torch::Tensor> learned_parameters() const override { return {scale_, offset_, beta_}; }
  torch::Tensor beta_table() const override { return beta_; }

 private:
  torch::Tensor Beta(int64_t time, const torch::Device& device) const {  // [time]
    const int64_t trained = beta_.size(0);
    torch::Tensor beta = beta_.to(device);
    if (time <= trained) return beta.narrow(0, 0, time);
    torch::Tensor extension;
    auto f32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
    if (config_.inverse_temperature.extend == "power_law") {
      // Fit ln beta = ln c + k ln ln n over the second half of the trained range (n >= 2).
      torch::NoGradGuard no_grad;
      int64_t first = std::max<int64_t>(trained / 2, 2);
      auto n = torch::arange(first, trained + 1, f32);
      auto x = n.log().log();
      auto y = beta.narrow(0, first - 1, trained - first + 1).clamp_min(1e-6).log();
      auto x_mean = x.mean(), y_mean = y.mean();
      auto k = ((x - x_mean) * (y - y_mean)).sum() / ((x - x_mean).pow(2).sum() + 1e-12);
      auto log_c = y_mean - k * x_mean;
      auto n_ext = torch::arange(trained + 1, time + 1, f32);
      extension = (log_c + k * n_ext.log().log()).exp();
    } else {
      extension = beta.narrow(0, trained - 1, 1).expand({time - trained});
    }
    return torch::cat({beta, extension});
  }

  ModelConfig config_;
  torch::Tensor beta_;    // [n_train]: beta[n], index n - 1
  torch::Tensor scale_;   // [layers, heads]
  torch::Tensor offset_;  // [layers, heads]
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_MODEL(learned, rung::LearnedTemperatureModel)
