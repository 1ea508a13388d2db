#include "core/model/inverse_temperature_form_model.h"

namespace rung {

// The generated list (cmake/registry_list.cmake): one entry per core/model/temperature/*.cc.
std::vector<const InverseTemperatureFormModelFactory*> RegisteredInverseTemperatureFormModels();

std::unique_ptr<InverseTemperatureFormModel> MakeInverseTemperatureFormModel(const ModelConfig& config,
                                                                             torch::nn::Module& owner) {
  static const std::vector<const InverseTemperatureFormModelFactory*> factories =
      RegisteredInverseTemperatureFormModels();
  for (const InverseTemperatureFormModelFactory* factory : factories) {
    if (config.inverse_temperature.form == factory->name()) return factory->Make(config, owner);
  }
  TORCH_CHECK(false, "inverse_temperature.form '", config.inverse_temperature.form, "' has no model part in this build");
}

std::vector<std::string> InverseTemperatureFormModelNames() {
  std::vector<std::string> names;
  for (const InverseTemperatureFormModelFactory* factory : RegisteredInverseTemperatureFormModels()) {
    names.emplace_back(factory->name());
  }
  return names;
}

}  // namespace rung
