#include "sweeps/spec/spec_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "core/config/config_error.h"

namespace rung {

void RejectUnknownKeys(const nlohmann::json& block, const std::string& path, const std::vector<std::string>& known,
                       const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  for (auto it = block.begin(); it != block.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string nearest = NearestKey(it.key(), known);
    const std::string key_path = path.empty() ? it.key() : path + "." + it.key();
    diagnostics->Error(document.Locate(key_path), key_path,
                       "unknown key" + (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)"));
  }
}

bool ReadSpecInteger(const nlohmann::json& block, const std::string& key, const std::string& path, int64_t minimum,
                     int64_t* out, const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  if (!block.contains(key)) return false;
  const nlohmann::json& value = block[key];
  const bool past_int64 = value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  if (!value.is_number_integer() || past_int64 || value.get<int64_t>() < minimum) {
    diagnostics->Error(document.Locate(path), path,
                       "expected an integer >= " + std::to_string(minimum) +
                           (past_int64 ? " within int64's range, got " + value.dump() : ""));
    return false;
  }
  *out = value.get<int64_t>();
  return true;
}

bool ReadSpecNumberAbove(const nlohmann::json& block, const std::string& key, const std::string& path,
                         double exclusive_minimum, double* out, const ConfigDocument& document,
                         SpecDiagnostics* diagnostics) {
  if (!block.contains(key)) return false;
  const nlohmann::json& value = block[key];
  if (!value.is_number() || !std::isfinite(value.get<double>()) || !(value.get<double>() > exclusive_minimum)) {
    std::ostringstream bound;
    bound << exclusive_minimum;
    diagnostics->Error(document.Locate(path), path, "expected a number > " + bound.str());
    return false;
  }
  *out = value.get<double>();
  return true;
}

bool ReadSpecString(const nlohmann::json& block, const std::string& key, const std::string& path, std::string* out,
                    const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  if (!block.contains(key)) return false;
  if (!block[key].is_string()) {
    diagnostics->Error(document.Locate(path), path, "expected a string");
    return false;
  }
  *out = block[key].get<std::string>();
  return true;
}

}  // namespace rung
