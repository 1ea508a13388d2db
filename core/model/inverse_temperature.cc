#include "core/model/inverse_temperature.h"

#include <cmath>

#include "core/model/defined_tensors.h"

namespace rung {

InverseTemperatureImpl::InverseTemperatureImpl(const ModelConfig& config) : config_(config) {
  const InverseTemperatureConfig& t = config.inverse_temperature;
  auto f32 = torch::TensorOptions().dtype(torch::kFloat);
  const int64_t layers = config.layers, heads = config.heads;
  if (t.form == "log_power" && t.learn_s) scale_ = register_parameter("s", torch::full({layers, heads}, t.s, f32));
  if (t.form == "ssmax") {
    scale_ = register_parameter("s", torch::full({layers, heads}, 1.0 / std::log(t.n_ref), f32));
  }
  if (t.form == "learned") {
    beta_ = register_parameter("beta", torch::ones({config.seq_len}, f32));
    scale_ = register_parameter("s", torch::ones({layers, heads}, f32));
    offset_ = register_parameter("b", torch::zeros({layers, heads}, f32));
  }
}

torch::Tensor InverseTemperatureImpl::LearnedBeta(int64_t time, const torch::Device& device) {
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

std::vector<torch::Tensor> InverseTemperatureImpl::Multipliers(int64_t time, const torch::Device& device) {
  return Multipliers(torch::arange(1, time + 1, torch::TensorOptions().dtype(torch::kFloat).device(device)));
}

std::vector<torch::Tensor> InverseTemperatureImpl::Multipliers(const torch::Tensor& keys) {
  const InverseTemperatureConfig& t = config_.inverse_temperature;
  std::vector<torch::Tensor> out(config_.layers);
  if (t.form == "none") return out;
  const torch::Device device = keys.device();
  const torch::Tensor n = keys.to(torch::kFloat);
  const double log_ref = std::log(t.n_ref);
  std::vector<int64_t> shape = n.sizes().vec();
  shape.push_back(config_.heads);
  if (t.form == "log_power" || t.form == "qwen") {
    torch::Tensor base = t.form == "log_power" ? torch::pow(n.clamp_min(2.0).log() / log_ref, t.xi)
                                               : torch::pow((n.log() / log_ref).clamp_min(1.0), t.xi);
    if (t.form == "log_power" && t.learn_s) {
      for (int64_t layer = 0; layer < config_.layers; ++layer) out[layer] = base.unsqueeze(-1) * scale_[layer].to(device);
    } else {
      torch::Tensor shared = (t.form == "log_power" ? base * t.s : base).unsqueeze(-1).expand(shape).contiguous();
      for (auto& layer : out) layer = shared;
    }
    return out;
  }
  if (t.form == "ssmax") {
    torch::Tensor log_n = n.log().unsqueeze(-1);
    for (int64_t layer = 0; layer < config_.layers; ++layer) out[layer] = log_n * scale_[layer].to(device);
    return out;
  }
  // learned: beta[n], the table extended to the largest n seen
  const int64_t largest = static_cast<int64_t>(n.max().item<float>());
  torch::Tensor table = LearnedBeta(std::max<int64_t>(largest, 1), device);
  torch::Tensor index = (n.to(torch::kLong) - 1).clamp_min(0);
  torch::Tensor beta = table.index_select(0, index.reshape({-1})).view(n.sizes()).unsqueeze(-1);  // [..., 1]
  for (int64_t layer = 0; layer < config_.layers; ++layer) {
    out[layer] = beta * scale_[layer].to(device) + offset_[layer].to(device);
  }
  return out;
}

std::vector<torch::Tensor> InverseTemperatureImpl::learned_parameters() const {
  return DefinedTensors({scale_, offset_, beta_});
}

}  // namespace rung
