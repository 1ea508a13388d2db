// sweeps/spec/spec_blocks.h
//
// Reading the spec's own blocks (policy, tune, early_stop, ...): unknown keys with the nearest known
// one, and typed values with their bounds, each error at the value's file:line:col. A value that is
// absent leaves the output as it was (its default).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/yaml_document.h"
#include "sweeps/spec/spec_diagnostics.h"

namespace rung {

// An error for every key of `block` that is not in `known` (with "did you mean" where one is near).
// `path` is the block's key path ("" for the top level).
void RejectUnknownKeys(const nlohmann::json& block, const std::string& path, const std::vector<std::string>& known,
                       const ConfigDocument& document, SpecDiagnostics* diagnostics);

// block[key] as an integer >= minimum into *out; an error at `path` otherwise. Returns whether it read one.
bool ReadSpecInteger(const nlohmann::json& block, const std::string& key, const std::string& path, int64_t minimum,
                     int64_t* out, const ConfigDocument& document, SpecDiagnostics* diagnostics);

// block[key] as a finite number > exclusive_minimum into *out; an error naming `what` otherwise.
bool ReadSpecNumberAbove(const nlohmann::json& block, const std::string& key, const std::string& path,
                         double exclusive_minimum, double* out, const ConfigDocument& document,
                         SpecDiagnostics* diagnostics);

// block[key] as a string into *out; an error otherwise.
bool ReadSpecString(const nlohmann::json& block, const std::string& key, const std::string& path, std::string* out,
                    const ConfigDocument& document, SpecDiagnostics* diagnostics);

}  // namespace rung
