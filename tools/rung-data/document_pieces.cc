#include "tools/rung-data/document_pieces.h"

namespace rung::data_tool {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Where the piece that starts at `start` ends, for a document longer than start + max_bytes.
size_t PieceEnd(std::string_view text, size_t start, size_t max_bytes) {
  const size_t limit = start + max_bytes;  // the piece is [start, end) with end <= limit < text.size()
  const size_t newline = text.rfind('\n', limit - 1);
  if (newline != std::string_view::npos && newline >= start) return newline + 1;
  for (size_t at = limit; at > start; --at) {
    if (IsBlank(text[at]) && !IsBlank(text[at - 1])) return at;
  }
  size_t at = limit;
  while (at > start + 1 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}

}  // namespace

std::vector<std::string_view> DocumentPieces(std::string_view document, size_t max_bytes) {
  if (max_bytes < 4) max_bytes = 4;
  std::vector<std::string_view> pieces;
  size_t start = 0;
  while (document.size() - start > max_bytes) {
    const size_t end = PieceEnd(document, start, max_bytes);
    pieces.push_back(document.substr(start, end - start));
    start = end;
  }
  pieces.push_back(document.substr(start));
  return pieces;
}

}  // namespace rung::data_tool
