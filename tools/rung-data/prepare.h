// tools/rung-data/prepare.h
//
// `rung-data prepare`: documents in, llm.c shards and a manifest out (core/data/token_manifest.h).
//   1. The options are checked (nothing is read or written for bad ones), the tokenizer loaded
//      (text_tokenizer.h: a SentencePiece model, a Hugging Face tokenizer.json, or a model folder) and
//      the documents of the inputs read (text_documents.h; a walk leaves out the output folder).
//   2. The output folder is created and locked for the rest of the run (core/common/folder_lock.h): a
//      second prepare into it is refused at once, before it writes anything.
//   3. The documents are encoded in parallel on `threads` threads (document_encoding.h), each with the
//      tokenizer's template tokens (a BOS where it adds one); a document longer than
//      max_document_bytes is encoded in pieces (document_pieces.h), its ids those of the pieces one
//      after another; shorter documents are encoded whole, as before the limit existed.
//   4. Split by document: document d goes to validation when DocumentSplitDraw(seed, d) < val_fraction
//      (the draw core/data's text corpora use); with two or more documents each split gets one.
//   5. Each split's stream: every document preceded by the end-of-text id (llm.c's convention, and the
//      token at which rung-train's documents start), cut into shards of at most shard_tokens tokens
//      (documents may continue in the next shard): train_000000.bin, ..., val_000000.bin, ... with the
//      llm.c header (uint16 when the vocabulary fits 65536 ids, else magic 20240801 v7 uint32). More than
//      kMaxShards shards are refused before any is written.
//   6. tokenizer.model or tokenizer.json (a copy of the file read) and manifest.json, last.
// Every file is written atomically (core/common/atomic_file.h). A rerun with the same inputs and options rewrites
// nothing whose content is already there (a shard whose SHA-256 matches stays as it is); the encoding
// is done again.
//
// Thread safety: reentrant; Prepares into one output folder exclude each other (step 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "tools/rung-data/text_documents.h"

namespace rung::data_tool {

// The most shards one prepare writes (a folder of more trains, but opening it costs a file each).
inline constexpr int64_t kMaxShards = 100'000;

struct PrepareOptions {
  std::string tokenizer;  // a tokenizer file or model folder (text_tokenizer.h)
  std::string eot;        // the end-of-text token; empty: the tokenizer folder's
  std::vector<std::string> inputs;
  std::string out;
  DocumentOptions documents;  // its `exclude` gains `out`
  double val_fraction = 0.05;
  int64_t shard_tokens = 100'000'000;
  uint64_t seed = 0;
  int64_t threads = 0;      // 0: every core; at most 1024
  int64_t token_bytes = 0;  // 0: 2 when the vocabulary fits, else 4
  int64_t max_document_bytes = int64_t{4} << 20;  // longer documents are encoded in pieces; at least 4
};

struct PrepareSummary {
  int64_t documents[2] = {0, 0};  // train, val
  int64_t tokens[2] = {0, 0};
  int64_t shards_written = 0;
  int64_t shards_kept = 0;  // already there with the same content
  int64_t documents_split = 0;  // longer than max_document_bytes, encoded in pieces
  int64_t eot_id = 0;
  std::string eot_token;
  int64_t vocab_size = 0;
  double encode_seconds = 0;
  int64_t encoded_bytes = 0;
};

// Errors (rung-data exits 2 for INVALID_ARGUMENT and UNAVAILABLE, 4 for NOT_FOUND and DATA_LOSS):
//   INVALID_ARGUMENT: options out of range (val_fraction outside (0, 1), shard_tokens outside [1, 2^31),
//     threads outside [0, 1024], max_document_bytes below 4, token_bytes not 0, 2 or 4), an output
//     folder that is a file (output_folder.h) or an input, token_bytes 2 with a vocabulary over 65536,
//     a shard_tokens that would make more than kMaxShards shards (saying the least that would do).
//   UNAVAILABLE: another prepare is writing the output folder ("... (pid N)").
//   DATA_LOSS: fewer than two documents; and those of ReadTextDocuments and LoadTextTokenizer (whose
//     INVALID_ARGUMENT and NOT_FOUND it returns too).
//   INTERNAL: a file cannot be written.
StatusOr<PrepareSummary> Prepare(const PrepareOptions& options);

}  // namespace rung::data_tool
