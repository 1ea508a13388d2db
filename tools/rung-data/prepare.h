// tools/rung-data/prepare.h
//
// `rung-data prepare`: documents in, llm.c shards and a manifest out (core/data/token_manifest.h).
//   1. The documents of the inputs (text_documents.h), encoded in parallel on `threads` threads.
//   2. Split by document: document d goes to validation when DocumentSplitDraw(seed, d) < val_fraction
//      (the draw core/data's text corpora use); with two or more documents each split gets one.
//   3. Each split's stream: every document preceded by the end-of-text id (llm.c's convention, and the
//      token at which rung-train's documents start), cut into shards of at most shard_tokens tokens
//      (documents may continue in the next shard): train_000000.bin, ..., val_000000.bin, ... with the
//      llm.c header (uint16 when the vocabulary fits 65536 ids, else magic 20240801 v7 uint32).
//   4. tokenizer.model (a copy of the model) and manifest.json, last.
// Every file is written atomically (core/common/atomic_file.h). A rerun with the same inputs and options rewrites
// nothing whose content is already there (a shard whose SHA-256 matches stays as it is); the encoding
// is done again.
//
// Thread safety: one Prepare at a time per output folder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "tools/rung-data/text_documents.h"

namespace rung::data_tool {

struct PrepareOptions {
  std::string tokenizer;  // a SentencePiece model file
  std::vector<std::string> inputs;
  std::string out;
  DocumentOptions documents;
  double val_fraction = 0.05;
  int64_t shard_tokens = 100'000'000;
  uint64_t seed = 0;
  int64_t threads = 0;      // 0: every core
  int64_t token_bytes = 0;  // 0: 2 when the vocabulary fits, else 4
};

struct PrepareSummary {
  int64_t documents[2] = {0, 0};  // train, val
  int64_t tokens[2] = {0, 0};
  int64_t shards_written = 0;
  int64_t shards_kept = 0;  // already there with the same content
  int64_t eot_id = 0;
  int64_t vocab_size = 0;
  double encode_seconds = 0;
  int64_t encoded_bytes = 0;
};

// Errors: INVALID_ARGUMENT for options out of range (val_fraction outside (0, 1), shard_tokens outside
// [1, 2^31), token_bytes 2 with a vocabulary over 65536, fewer than two documents), and those of
// ReadTextDocuments and Tokenizer::Load; INTERNAL when a file cannot be written.
StatusOr<PrepareSummary> Prepare(const PrepareOptions& options);

}  // namespace rung::data_tool
