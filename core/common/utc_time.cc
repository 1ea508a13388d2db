#include "core/common/utc_time.h"

namespace rung {

std::string UtcText(std::time_t seconds) {
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%SZ", &utc);
  return text;
}

std::string UtcNow() { return UtcText(std::time(nullptr)); }

}  // namespace rung
