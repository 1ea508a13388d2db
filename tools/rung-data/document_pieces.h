// tools/rung-data/document_pieces.h
//
// DocumentPieces: a document too long to hand the tokenizer whole, cut into pieces of at most
// `max_bytes` (SentencePiece's unigram encoder takes time and memory superlinear in the length of what
// it is given). Each cut is made as late as the limit allows, at the best boundary there is: after a
// newline; else where a run of spaces or tabs starts (so a word keeps the whitespace before it, as
// SentencePiece's pieces do); else between two UTF-8 characters. The pieces are views of the document,
// in order, and concatenate to it; a document of at most max_bytes is one piece, itself.
//
// Example:
//   for (std::string_view piece : DocumentPieces(document, 4 << 20)) ...encode piece, append its ids...
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace rung::data_tool {

// REQUIRES: max_bytes >= 4 (a UTF-8 character always fits); `document` is valid UTF-8.
std::vector<std::string_view> DocumentPieces(std::string_view document, size_t max_bytes);

}  // namespace rung::data_tool
