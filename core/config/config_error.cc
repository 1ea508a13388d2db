#include "core/config/config_error.h"

#include <algorithm>

namespace rung {

Status ConfigErrorsToStatus(const std::vector<ConfigError>& errors, const std::string& what) {
  if (errors.empty()) return Status::Ok();
  std::string message = what + ": " + std::to_string(errors.size()) + " error(s)";
  for (const ConfigError& error : errors) message += "\n  " + error.path + ": " + error.message;
  return Status::InvalidArgument(message);
}

int EditDistance(const std::string& a, const std::string& b) {
  std::vector<int> previous(b.size() + 1), current(b.size() + 1);
  for (size_t col = 0; col <= b.size(); ++col) previous[col] = static_cast<int>(col);
  for (size_t row = 1; row <= a.size(); ++row) {
    current[0] = static_cast<int>(row);
    for (size_t col = 1; col <= b.size(); ++col) {
      int substitute = previous[col - 1] + (a[row - 1] == b[col - 1] ? 0 : 1);
      current[col] = std::min({previous[col] + 1, current[col - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string NearestKey(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  int best_distance = 1 << 30;
  for (const std::string& candidate : candidates) {
    int distance = EditDistance(key, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  int allowed = std::max<int>(2, static_cast<int>(key.size()) / 3);
  return best_distance <= allowed ? best : std::string();
}

}  // namespace rung
