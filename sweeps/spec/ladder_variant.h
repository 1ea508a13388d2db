// sweeps/spec/ladder_variant.h
//
// How a sweep's cells are named as ladder variants: by the values of its variant keys (every sweep
// axis but the seed, unless the caller names others). The one naming of the fits a sweep's results
// feed (`rung fit SWEEP`, coordinator/domain/sweep_fits.cc) and of the plans made from its spec
// (`rung plan SPEC`): a plan's rows are the variants a fit of the same spec will show.
//
//   one key      the value: "rope"
//   several      "key=value,..." in the keys' order: "position.variant=rope,train.lr=0.001"
// A string value prints as itself, any other JSON value as its JSON text, an absent key as "null".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rung {

// Every key of the cells' axis assignments but "seed" (and `tuned_key`, the key a tune block searches,
// when given), sorted; {"position.variant"} when none.
std::vector<std::string> DefaultVariantKeys(const std::vector<const nlohmann::json*>& assignments,
                                            const std::string& tuned_key = "");

// The value of `key` for a cell: its assignment, else the dotted path in its resolved config; nullptr
// when neither has it.
const nlohmann::json* VariantKeyValue(const nlohmann::json& assignments, const nlohmann::json& config,
                                      const std::string& key);

// The cell's variant name under `keys` (see above).
std::string LadderVariantName(const nlohmann::json& assignments, const nlohmann::json& config,
                              const std::vector<std::string>& keys);

}  // namespace rung
