#include "coordinator/cli/text_table.h"

#include <cmath>
#include <cstdio>

namespace rung::cli {

std::string HumanCount(double value) {
  const char* suffixes[] = {"", "K", "M", "B", "T"};
  int index = 0;
  while (std::fabs(value) >= 1000.0 && index < 4) {
    value /= 1000.0;
    ++index;
  }
  char text[32];
  std::snprintf(text, sizeof(text), index == 0 ? "%.0f%s" : "%.2f%s", value, suffixes[index]);
  return text;
}

std::string Scientific(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*e", digits - 1, value);
  return text;
}

std::string HumanDuration(double seconds) {
  char text[32];
  if (seconds < 120) std::snprintf(text, sizeof(text), "%.0f s", seconds);
  else if (seconds < 7200) std::snprintf(text, sizeof(text), "%.1f min", seconds / 60);
  else if (seconds < 172800) std::snprintf(text, sizeof(text), "%.1f h", seconds / 3600);
  else std::snprintf(text, sizeof(text), "%.1f days", seconds / 86400);
  return text;
}

}  // namespace rung::cli
