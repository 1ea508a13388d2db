// core/config/config_error.h
//
// One problem found in a configuration: the dotted key path where it is (e.g. "model.heads") and
// what is wrong. Front ends map paths to file:line:col when they know them (YAML specs do).
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung {

struct ConfigError {
  std::string path;
  std::string message;
};

// INVALID_ARGUMENT listing every error, one per line as "path: message"; OK when empty.
Status ConfigErrorsToStatus(const std::vector<ConfigError>& errors, const std::string& what);

// Levenshtein distance; used to suggest the nearest valid key.
int EditDistance(const std::string& a, const std::string& b);

// The candidate closest to `key` when it is close enough to be a plausible typo, else "".
std::string NearestKey(const std::string& key, const std::vector<std::string>& candidates);

}  // namespace rung
