#include "core/model/inverse_temperature.h"

namespace rung {

InverseTemperatureImpl::InverseTemperatureImpl(const ModelConfig& config)
    : form_(MakeInverseTemperatureFormModel(config, *this)) {}

std::vector<torch::Tensor> InverseTemperatureImpl::Multipliers(int64_t time, const torch::Device& device) {
  return Multipliers(torch::arange(1, time + 1, torch::TensorOptions().dtype(torch::kFloat).device(device)));
}

std::vector<torch::Tensor> InverseTemperatureImpl::Multipliers(const torch::Tensor& keys) {
  return form_->Multipliers(keys);
}

}  // namespace rung
