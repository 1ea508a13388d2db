// tools/rung-data/text_documents.h
//
// The documents of rung-data's inputs: each --input is a file or a folder (every regular file below
// it, sorted, hidden names skipped: core/data/byte_corpus.h ListCorpusFiles). A folder walk leaves out
// rung-data's own outputs, which are not text: the output folder of the run (DocumentOptions::exclude)
// and every folder holding a manifest.json beside a tokenizer.model or tokenizer.json (what `prepare`
// writes), or a tokenizer.model beside a tokenizer.json (`tokenizer train`'s). A document is
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
  std::vector<std::string> exclude;  // folders a walk leaves out whole (the run's output folder)
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
  std::vector<std::string> skipped_folders;  // the folders the walks left out (see above)
};

// Reads every document of `inputs`. Errors: NOT_FOUND for a path that does not exist or a file that
// cannot be opened; INVALID_ARGUMENT for an input folder with no file in it, or that is an excluded
// folder; DATA_LOSS on a read error, naming the file and byte offset for invalid UTF-8 (text mode) and
// a JSON-lines line that is not an object with string field F (or not JSON), and for inputs with no
// document at all.
StatusOr<TextDocuments> ReadTextDocuments(const std::vector<std::string>& inputs, const DocumentOptions& options);

}  // namespace rung::data_tool
