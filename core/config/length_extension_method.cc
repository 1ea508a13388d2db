#include "core/config/length_extension_method.h"

#include "core/config/registry.h"

namespace rung {

// The generated list (cmake/registry_list.cmake): one entry per core/config/extension/*.cc.
std::vector<const LengthExtensionMethod*> RegisteredLengthExtensionMethods();

namespace {

const Registry<LengthExtensionMethod>& Methods() {
  static const Registry<LengthExtensionMethod> registry(RegisteredLengthExtensionMethods(), "length-extension method");
  return registry;
}

}  // namespace

const LengthExtensionMethod* FindLengthExtensionMethod(std::string_view name) { return Methods().Find(name); }
const std::vector<const LengthExtensionMethod*>& LengthExtensionMethods() { return Methods().entries(); }
const std::vector<std::string>& LengthExtensionMethodNames() { return Methods().Names(); }
std::string LengthExtensionMethodsHelp() {
  return Methods().Help("Length-extension methods (train.extrapolation_methods):");
}

}  // namespace rung
