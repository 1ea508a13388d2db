#include "core/config/inverse_temperature_form.h"

#include "core/config/registry.h"

namespace rung {

// The generated list (cmake/registry_list.cmake): one entry per core/config/temperature/*.cc.
std::vector<const InverseTemperatureForm*> RegisteredInverseTemperatureForms();

namespace {

const Registry<InverseTemperatureForm>& Forms() {
  static const Registry<InverseTemperatureForm> registry(RegisteredInverseTemperatureForms(), "inverse-temperature form");
  return registry;
}

}  // namespace

const InverseTemperatureForm* FindInverseTemperatureForm(std::string_view name) { return Forms().Find(name); }
const std::vector<const InverseTemperatureForm*>& InverseTemperatureForms() { return Forms().entries(); }
const std::vector<std::string>& InverseTemperatureFormNames() { return Forms().Names(); }
std::string InverseTemperatureFormsHelp() { return Forms().Help("Inverse-temperature forms (inverse_temperature.form):"); }

}  // namespace rung
