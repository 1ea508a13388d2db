#include "core/config/config_number_range.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace rung {

std::string ConfigNumberText(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "infinity" : "-infinity";
  return nlohmann::json(value).dump();
}

std::string ConfigRealRangeProblem(double value) {
  if (std::isnan(value)) return "NaN is not a number rung-train can use";
  const double magnitude = std::fabs(value);
  if (magnitude > kMaxConfigReal) {
    return ConfigNumberText(value) + " is outside float32's range (magnitude at most " + ConfigNumberText(kMaxConfigReal) +
           "): rung-train holds this value as a float32";
  }
  if (magnitude != 0.0 && magnitude < kMinConfigRealMagnitude) {
    return ConfigNumberText(value) + " is below float32's smallest normal magnitude (" +
           ConfigNumberText(kMinConfigRealMagnitude) + "): rung-train holds this value as a float32, where it would " +
           "flush to 0; write 0 or a larger value";
  }
  return "";
}

}  // namespace rung
