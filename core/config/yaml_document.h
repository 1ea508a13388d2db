// core/config/yaml_document.h
//
// Reads a YAML document (or JSON, which YAML also reads) into JSON, remembering where each key path
// came from, so that errors in trial configs and sweep specs name file:line:col. Torch-free.
// Key paths join mapping keys with '.' and sequence indices as "[i]": "sweep.seed[2]".
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

// Errors: NOT_FOUND (no such file), INVALID_ARGUMENT (syntax error, a top level that is not a
// mapping, or what PreflightYamlDocument refuses: over 1 MiB, nested deeper than 64 levels, more than
// 1,000,000 nodes once aliases are expanded, a key twice in one mapping; each with file:line:col).
// Reads at most one byte past the size limit.
StatusOr<ConfigDocument> ReadConfigDocument(const std::string& path);

// The text of a spec or config file, reading at most one byte past kMaxConfigDocumentBytes (so a
// pipe or device that never ends is refused too). Errors: NOT_FOUND (cannot open), INVALID_ARGUMENT
// ("path:1:1: the document is larger than ...").
StatusOr<std::string> ReadConfigText(const std::string& path);

// The same for text held in memory; `name` stands for the file in locations.
StatusOr<ConfigDocument> ParseConfigDocument(const std::string& text, const std::string& name);

}  // namespace rung
