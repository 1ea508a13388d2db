// No inverse temperature's model part: no multiplier (core/config/temperature/none.cc).
#include "core/model/inverse_temperature_form_model.h"

namespace rung {
namespace {

class NoTemperatureModel final : public InverseTemperatureFormModel {
 public:
  NoTemperatureModel(const ModelConfig& config, torch::nn::Module&) : layers_(config.layers) {}
  std::vector<torch::Tensor> Multipliers(const torch::Tensor&) override { return std::vector<torch::Tensor>(layers_); }

 private:
  int64_t layers_;
};

}  // namespace
}  // namespace rung

RUNG_INVERSE_TEMPERATURE_MODEL(none, rung::NoTemperatureModel)
