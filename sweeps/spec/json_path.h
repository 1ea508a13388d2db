// sweeps/spec/json_path.h
//
// Dotted key paths into JSON trial configs ("position.variant", "train.schedule.warmup_steps").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rung {

std::vector<std::string> SplitPath(const std::string& path);

// The value at `path`, or nullptr when any step is missing.
const nlohmann::json* FindPath(const nlohmann::json& root, const std::string& path);

// Sets `path` to `value`, creating intermediate objects. A mapping value is merged key by key into
// an existing mapping (so {form: log_power, xi: 0.5} at "inverse_temperature" keeps other keys);
// anything else replaces. Calls on_leaf(path) for every leaf path written.
void MergeAtPath(nlohmann::json* root, const std::string& path, const nlohmann::json& value,
                 const std::function<void(const std::string&)>& on_leaf = {});

// Removes `path` if present.
void ErasePath(nlohmann::json* root, const std::string& path);

// True when `selector` (a sweep's baseline: {"position.variant": "rope"}) is a non-empty object and
// every one of its dotted paths has, in `config`, the value it names.
bool MatchesBaseline(const nlohmann::json& config, const nlohmann::json& selector);

// "KEY=VALUE" as the command line and selectors write it (--where, --against, from_trial's
// "<sweep>/KEY=VALUE,..."): VALUE as JSON where it reads as JSON, else as the string it is
// (rope -> "rope"); false where there is no '=' or no key.
bool ParseKeyValue(const std::string& condition, std::string* key, nlohmann::json* value);

}  // namespace rung
