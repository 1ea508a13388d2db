// worker/config_file.h
//
// Reads a trial config file (YAML, or JSON which YAML also reads) into JSON, remembering where each
// key path came from so that configuration errors name file:line:col. Torch-free.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace rung {

struct ConfigDocument {
  nlohmann::json json;
  std::map<std::string, std::string> locations;  // "model.heads" -> "trial.yaml:4:10"

  // Location of a key path, or of its nearest enclosing path that has one.
  std::string Locate(const std::string& path) const;
};

// Errors: NOT_FOUND (no such file), INVALID_ARGUMENT (syntax error, with file:line:col).
StatusOr<ConfigDocument> ReadConfigDocument(const std::string& path);

}  // namespace rung
