// sweeps/spec/ladder_variant.cc
#include "sweeps/spec/ladder_variant.h"

#include <set>

#include "sweeps/spec/json_path.h"

namespace rung {
namespace {

std::string ValueText(const nlohmann::json* value) {
  if (value == nullptr) return "null";
  return value->is_string() ? value->get<std::string>() : value->dump();
}

}  // namespace

std::vector<std::string> DefaultVariantKeys(const std::vector<const nlohmann::json*>& assignments,
                                            const std::string& tuned_key) {
  std::set<std::string> keys;
  for (const nlohmann::json* cell : assignments) {
    if (cell == nullptr || !cell->is_object()) continue;
    for (auto item = cell->begin(); item != cell->end(); ++item) {
      if (item.key() != "seed" && (tuned_key.empty() || item.key() != tuned_key)) keys.insert(item.key());
    }
  }
  if (keys.empty()) return {"position.variant"};
  return {keys.begin(), keys.end()};
}

const nlohmann::json* VariantKeyValue(const nlohmann::json& assignments, const nlohmann::json& config,
                                      const std::string& key) {
  if (assignments.is_object() && assignments.contains(key)) return &assignments.at(key);
  return FindPath(config, key);
}

std::string LadderVariantName(const nlohmann::json& assignments, const nlohmann::json& config,
                              const std::vector<std::string>& keys) {
  if (keys.size() == 1) return ValueText(VariantKeyValue(assignments, config, keys.front()));
  std::string name;
  for (const std::string& key : keys) {
    name += (name.empty() ? "" : ",") + key + "=" + ValueText(VariantKeyValue(assignments, config, key));
  }
  return name;
}

}  // namespace rung
