#include "core/hf/byte_level_alphabet.h"

namespace rung::hf {
namespace {

// The code point byte b stands for.
std::array<uint32_t, 256> CodePoints() {
  std::array<uint32_t, 256> code_points{};
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    code_points[b] = printable ? b : next++;
  }
  return code_points;
}

std::string Utf8(uint32_t code_point) {
  std::string out;
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else {  // every code point of the alphabet is below U+0800
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
  return out;
}

}  // namespace

const std::array<std::string, 256>& ByteLevelCharacters() {
  static const std::array<std::string, 256> characters = [] {
    std::array<std::string, 256> out;
    const std::array<uint32_t, 256> code_points = CodePoints();
    for (size_t b = 0; b < 256; ++b) out[b] = Utf8(code_points[b]);
    return out;
  }();
  return characters;
}

int ByteOfByteLevelCharacter(uint32_t code_point) {
  static const std::array<int, 512> bytes = [] {
    std::array<int, 512> out;
    out.fill(-1);
    const std::array<uint32_t, 256> code_points = CodePoints();
    for (int b = 0; b < 256; ++b) out[code_points[static_cast<size_t>(b)]] = b;
    return out;
  }();
  return code_point < bytes.size() ? bytes[code_point] : -1;
}

}  // namespace rung::hf
