#include "core/common/utf8.h"

#include <cstdint>

namespace rung {

size_t ValidUtf8Prefix(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at]);
    size_t length = 0;
    uint32_t code = 0;
    if (byte < 0x80) {
      length = 1;
      code = byte;
    } else if ((byte & 0xE0) == 0xC0) {
      length = 2;
      code = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3;
      code = byte & 0x0F;
    } else if ((byte & 0xF8) == 0xF0) {
      length = 4;
      code = byte & 0x07;
    } else {
      return at;
    }
    if (at + length > text.size()) return at;
    for (size_t next = 1; next < length; ++next) {
      const auto continuation = static_cast<unsigned char>(text[at + next]);
      if ((continuation & 0xC0) != 0x80) return at;
      code = (code << 6) | (continuation & 0x3F);
    }
    static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return at;
    at += length;
  }
  return at;
}

}  // namespace rung
