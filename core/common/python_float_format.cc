#include "core/common/python_float_format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace rung {

std::string PythonGeneralFormat(double value, int precision) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const std::string sign = std::signbit(value) ? "-" : "";
  if (value == 0.0) return sign + "0.0";
  // "d.ddde+XX": glibc rounds correctly, as Python's dtoa does.
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*e", precision - 1, std::fabs(value));
  const std::string scientific = buffer;
  const size_t e = scientific.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (scientific[i] != '.') digits += scientific[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exponent = std::atoi(scientific.c_str() + e + 1);
  const int point = exponent + 1;  // digits before the decimal point
  if (point <= -4 || point > precision - 1) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char tail[16];
    std::snprintf(tail, sizeof(tail), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + tail;
  }
  if (point <= 0) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (static_cast<size_t>(point) >= digits.size()) {
    return sign + digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
  }
  return sign + digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
}

}  // namespace rung
