#include "tools/rung-data/separator_escapes.h"

namespace rung::data_tool {

StatusOr<std::string> UnescapeSeparator(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (i + 1 == text.size()) {
      return Status::InvalidArgument("a lone backslash ends it (write \\\\ for a backslash; the escapes are \\n, "
                                     "\\t, \\f, \\r and \\\\)");
    }
    const char next = text[++i];
    switch (next) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'f': out += '\f'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      default:
        return Status::InvalidArgument("'\\" + std::string(1, next) + "' at byte offset " + std::to_string(i - 1) +
                                       " is not an escape (the escapes are \\n, \\t, \\f, \\r and \\\\)");
    }
  }
  return out;
}

}  // namespace rung::data_tool
