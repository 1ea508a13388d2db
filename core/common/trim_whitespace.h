// core/common/trim_whitespace.h
//
// Text without the whitespace around it (spaces, tabs, line ends, vertical tabs and form feeds, as
// std::isspace in the C locale), for what rung reads from files and other programs: a token file, a
// header value, a line a command printed.
//
// Example:
//   TrimWhitespace("  2026-12-06T14:00:00\n")   // "2026-12-06T14:00:00"
//
// Thread safety: pure.
#pragma once

#include <string_view>

namespace rung {

// A view of `text` without its leading and trailing whitespace (empty when it is all whitespace).
inline std::string_view TrimWhitespace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace rung
