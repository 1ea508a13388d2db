#include "core/model/inverse_temperature_form_model.h"

#include "core/config/registry.h"

namespace rung {

// The generated list (cmake/registry_list.cmake): one entry per core/model/temperature/*.cc.
std::vector<const InverseTemperatureFormModelFactory*> RegisteredInverseTemperatureFormModels();

std::unique_ptr<InverseTemperatureFormModel> MakeInverseTemperatureFormModel(const ModelConfig& config,
                                                                             torch::nn::Module& owner) {
  static const std::vector<const InverseTemperatureFormModelFactory*> factories =
      RegisteredInverseTemperatureFormModels();
  const InverseTemperatureFormModelFactory* factory = FindNamed(factories, config.inverse_temperature.form);
  TORCH_CHECK(factory != nullptr, "inverse_temperature.form '", config.inverse_temperature.form,
              "' has no model part in this build");
  return factory->Make(config, owner);
}

std::vector<std::string> InverseTemperatureFormModelNames() { return NamesOf(RegisteredInverseTemperatureFormModels()); }

}  // namespace rung
