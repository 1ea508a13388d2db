// tools/rung-data/separator_escapes.h
//
// The escapes a document separator (--split-on) may carry on a command line, where a newline or a form
// feed is awkward to type: \n, \t, \f and \r stand for newline, tab, form feed and carriage return,
// \\ for one backslash; every other character is itself. A backslash before anything else, or at the end,
// is refused rather than guessed at (it used to stand for the character after it: '\x' split on x).
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(std::string separator, UnescapeSeparator("\\f"));   // "\f"
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace rung::data_tool {

// `text` with its escapes replaced. INVALID_ARGUMENT naming the first malformed escape and its offset.
StatusOr<std::string> UnescapeSeparator(std::string_view text);

}  // namespace rung::data_tool
