#include "core/model/positional_variant_model.h"

#include <string>

#include "core/config/registry.h"

namespace rung {

// The generated list (cmake/registry_list.cmake): one entry per core/model/positional/*.cc.
std::vector<const PositionalVariantModelFactory*> RegisteredPositionalVariantModels();

torch::Tensor PositionalVariantModel::Frequencies(int64_t) const { return {}; }
void PositionalVariantModel::AdjustTables(LayerTables*, const torch::Tensor&, int64_t) const {}
torch::Tensor PositionalVariantModel::QueryScale(int64_t, int64_t, const torch::Tensor&) const { return {}; }
torch::Tensor PositionalVariantModel::LinearBiasSlopes() const { return {}; }
torch::Tensor PositionalVariantModel::MakeInputTable(torch::nn::Module&) const { return {}; }
torch::Tensor PositionalVariantModel::InputRows(const torch::Tensor&, int64_t) const { return {}; }
bool PositionalVariantModel::StartContextExtension(const std::string&, double, double, double) { return false; }

std::unique_ptr<PositionalVariantModel> MakePositionalVariantModel(const ModelConfig& config,
                                                                   torch::nn::Module& owner,
                                                                   const RotaryBasis& basis) {
  static const std::vector<const PositionalVariantModelFactory*> factories = RegisteredPositionalVariantModels();
  const PositionalVariantModelFactory* factory = FindNamed(factories, config.position.variant);
  TORCH_CHECK(factory != nullptr, "position.variant '", config.position.variant, "' has no model part in this build");
  return factory->Make(config, owner, basis);
}

std::vector<std::string> PositionalVariantModelNames() { return NamesOf(RegisteredPositionalVariantModels()); }

}  // namespace rung
