// tools/rung-data/encode.h
//
// `rung-data encode`: documents in, their ids out, with no split, shards or manifest: for evaluating a
// model on a text (`rung eval --text`), and for checking rung's encoder against another.
//   jsonl  one line per document, a JSON array of its ids (template tokens included where
//          special_tokens), in document order; `out` "-" is standard output;
//   bin    one llm.c shard (core/data/llmc_shard_format.h) of the documents' ids, the end-of-text id
//          between consecutive documents.
// Where token_byte_lengths_out is given, each id's length in bytes when decoded (TextTokenizer::
// TokenByteLengths) is written there as a JSON array, so a reader of the shard can count bits per byte.
// The tokenizer, documents and parallel encoding are prepare's (text_tokenizer.h, text_documents.h,
// document_encoding.h). A file is written atomically.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "tools/rung-data/text_documents.h"

namespace rung::data_tool {

struct EncodeOptions {
  std::string tokenizer;  // a tokenizer file or model folder
  std::string eot;        // the end-of-text token; empty: the tokenizer folder's
  std::vector<std::string> inputs;
  DocumentOptions documents;
  std::string out;              // a file, or "-" (jsonl only)
  std::string format = "jsonl";  // jsonl | bin
  bool special_tokens = true;   // the tokenizer's template tokens around each document
  int64_t threads = 0;          // 0: every core; at most 1024
  int64_t token_bytes = 0;      // bin: 0: 2 when the vocabulary fits, else 4
  int64_t max_document_bytes = int64_t{4} << 20;
  std::string token_byte_lengths_out;  // where given: each id's decoded length in bytes, a JSON array
};

struct EncodeSummary {
  int64_t documents = 0;
  int64_t tokens = 0;  // the documents' (end-of-text separators not counted)
  int64_t eot_id = -1;  // -1: the tokenizer names none (and none was needed)
  int64_t vocab_size = 0;
  int64_t documents_split = 0;
  double encode_seconds = 0;
  int64_t encoded_bytes = 0;
};

// Errors: INVALID_ARGUMENT for options out of range (format, threads, token_bytes, max_document_bytes,
// "-" with bin, token_bytes 2 with a vocabulary over 65536); those of LoadTextTokenizer and
// ReadTextDocuments; INTERNAL where the output cannot be written.
StatusOr<EncodeSummary> Encode(const EncodeOptions& options);

}  // namespace rung::data_tool
