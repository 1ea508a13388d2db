// core/data/byte_corpus.h
//
// ByteCorpus: byte-level text (token id = byte value, vocabulary 256) from a file or a folder, split
// into documents and divided into a training and a validation split by document. Backs the "text" and
// "builtin" sources.
//
// Loading:
//   - A folder is read recursively; its regular files are read in sorted path order. Names starting
//     with '.' (files and folders) are skipped.
//   - Each file is cut into documents at config.doc_separator; empty pieces are dropped. Documents never
//     span files. Documents are numbered 0, 1, ... in read order.
//   - Document d goes to validation when u(split_seed, d) < val_fraction, u uniform in [0, 1) from a
//     counter-based hash. With two or more documents, each split gets at least one: if the hash puts
//     every document on one side, the document with the smallest (largest) u moves over.
//   - A single document cannot be split by document: its last val_fraction of bytes is held out instead,
//     and Describe() says "split": "single_document_tail".
//   - A split's stream is its documents in order, each preceded by the separator, so the model sees
//     document boundaries and windows may cross them.
//   - With data.eval_min_doc_tokens > 0, validation windows keep to the validation documents of at least
//     that many tokens (separator included), each window inside one of them from its start
//     (core/data/sampling.h DocumentWindowStart); none that long is INVALID_ARGUMENT.
//   - Everything is held in memory (about the corpus size); use token shards for large data.
//
// Batches follow core/data/sampling.h (random training windows keyed by (seed, index, row); fixed,
// non-overlapping validation windows). loss_mask is empty.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(std::unique_ptr<ByteCorpus> corpus, ByteCorpus::Load(config, seed));
//   TokenBatch batch = corpus->Batch(Split::kTrain, step, 32, 128);
//
// Thread safety: immutable after loading; const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/config/data_config.h"
#include "core/data/batch_source.h"

namespace rung {

class ByteCorpus : public BatchSource {
 public:
  // Loads config.path (a file or a folder) as source "text".
  // Errors: NOT_FOUND if the path does not exist or a file cannot be opened; DATA_LOSS on a read
  // error, a path that is neither file nor folder, a folder of no files, or no text (rung-train: exit
  // 4, data unusable); INVALID_ARGUMENT if a split is shorter than config.seq_len + 1 bytes (config).
  static StatusOr<std::unique_ptr<ByteCorpus>> Load(const DataConfig& config, uint64_t seed);

  // Loads the given files, in this order, under another source name (used by "builtin"). `path` is
  // what Describe() reports as the path; `provenance` is merged into Describe()'s object. With
  // `group_starts` (ascending document indices, the first 0), the documents [group_starts[g],
  // group_starts[g + 1]) become one document, concatenated without separators (the builtin corpus's
  // books); DATA_LOSS if they do not fit the documents read.
  static StatusOr<std::unique_ptr<ByteCorpus>> LoadFiles(const std::vector<std::string>& files,
                                                         const DataConfig& config, uint64_t seed,
                                                         const std::string& source, const std::string& path,
                                                         nlohmann::json provenance,
                                                         const std::vector<int64_t>& group_starts = {});

  int64_t vocab_size() const override { return 256; }
  TokenBatch Batch(Split split, int64_t index, int64_t batch_size, int64_t seq_len) const override;
  int64_t SplitTokens(Split split) const override;
  // One byte per token.
  const std::vector<int32_t>* TokenByteLengths() const override;

  // {"source", "path", "files": count, "file_list": paths (when at most 64),
  //  "documents": {"train", "validation"}, "tokens": {"train", "validation"},
  //  "split": "by_document" | "single_document_tail", "val_fraction", "split_seed", "doc_separator",
  //  "sha256": of all files' bytes in read order, "eval_documents": {"min_tokens", "documents"} with
  //  data.eval_min_doc_tokens} plus the provenance given to LoadFiles.
  nlohmann::json Describe() const override;

  // The bytes a split's batches are drawn from (documents, each preceded by the separator).
  const std::string& SplitBytes(Split split) const;

  // Indices (read order) of the documents in a split. In the single-document case both splits list
  // document 0.
  const std::vector<int64_t>& DocumentIndices(Split split) const;

  // SHA-256 of all files' bytes in read order.
  const std::string& sha256() const { return sha256_; }

 private:
  ByteCorpus() = default;

  std::string source_;
  std::string path_;
  std::vector<std::string> files_;
  DataConfig config_;
  uint64_t seed_ = 0;
  bool single_document_ = false;
  std::string sha256_;
  nlohmann::json provenance_;
  std::string train_bytes_;
  std::string validation_bytes_;
  std::vector<int64_t> train_documents_;
  std::vector<int64_t> validation_documents_;
  std::vector<DocumentSpan> eval_documents_;  // data.eval_min_doc_tokens: the long validation documents
};

// The non-empty pieces of `text` between occurrences of `separator` (views into `text`).
// REQUIRES: separator is not empty.
std::vector<std::string_view> SplitDocuments(std::string_view text, std::string_view separator);

// Whether document `document_index` belongs to validation before the at-least-one-per-split fix-up:
// DocumentSplitDraw(split_seed, document_index) < val_fraction.
double DocumentSplitDraw(uint64_t split_seed, int64_t document_index);

// The split by document of `documents` documents (true: validation), as the byte corpora and
// `rung-data prepare` make it: DocumentSplitDraw < val_fraction, then at least one document in each
// split (the lowest draw moves to validation when none is there, the highest to training when all
// are). REQUIRES: documents >= 2.
std::vector<bool> ValidationDocuments(size_t documents, uint64_t split_seed, double val_fraction);

// How ListCorpusFiles walks a folder.
struct CorpusWalk {
  std::string what = "data.path";  // names the path in errors ("--input" for rung-data)
  // Folders below the path to leave out whole (with everything in them); none when unset.
  std::function<bool(const std::string& folder)> skip_folder;
};

// The files under `path` in load order: the path itself if it is a regular file, else every regular
// file below it (recursively, hidden names and walk.skip_folder's folders skipped), sorted by path.
// NOT_FOUND if the path does not exist; DATA_LOSS if a folder holds no files.
StatusOr<std::vector<std::string>> ListCorpusFiles(const std::string& path, const CorpusWalk& walk = {});

}  // namespace rung
