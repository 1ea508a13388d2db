// tools/rung-data/text_documents.h
//
// The documents of rung-data's inputs: each --input is a file or a folder (every regular file below
// it, sorted, hidden names skipped: core/data/byte_corpus.h ListCorpusFiles). A document is
//   - a whole file (default),
//   - a piece of a file between occurrences of --split-on (empty pieces dropped), or
//   - with --text-field F, the string field F of each line of a JSON-lines file (empty lines skipped).
// Documents must be valid UTF-8 (JSON strings are by construction).
//
// Thread safety: values and reentrant functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung::data_tool {

struct DocumentOptions {
  std::string split_on;    // "" = one document per file
  std::string text_field;  // "" = text files; else JSON-lines with this field
};

struct SourceFile {
  std::string path;
  int64_t bytes = 0;
  std::string sha256;
};

struct TextDocuments {
  std::vector<SourceFile> sources;     // in read order
  std::vector<std::string> documents;  // in read order
  int64_t bytes = 0;                   // UTF-8 bytes of all documents
};

// Reads every document of `inputs`. Errors: NOT_FOUND for a path that does not exist or a file that
// cannot be opened; DATA_LOSS on a read error; INVALID_ARGUMENT naming the file and byte offset for
// invalid UTF-8 (text mode), a JSON-lines line that is not an object with string field F (or not
// JSON), and for inputs with no document at all.
StatusOr<TextDocuments> ReadTextDocuments(const std::vector<std::string>& inputs, const DocumentOptions& options);

}  // namespace rung::data_tool
