// core/data/batch_source.h
//
// A BatchSource hands the trainer token batches, torch-free. Every batch is a pure function of
// (split, index, batch_size, seq_len): the same call always returns the same batch, so a resumed run
// that knows how many batches it drew continues exactly where it stopped (the data position is one
// integer). Validation batches are fixed and disjoint from training data (by document for text, by
// position or by file for shards; synthetic tasks draw them from a separate key stream).
//
// Sources (MakeBatchSource): "builtin" (the Austen corpus installed by deploy/, byte-level), "text"
// (a file or folder of files, byte-level, split into documents at data.doc_separator), "shards"
// (flat little-endian uint16/uint32 token files, memory-mapped), and the synthetic tasks "nrw",
// "niah", "position_index" (docs/science.md section 8), generated in process from a counter-based RNG.
//
// Thread safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/config/data_config.h"

namespace rung {

// Row-major [batch_size, seq_len] token ids. targets[b, t] is the token that follows inputs[b, t].
struct TokenBatch {
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  std::vector<int32_t> inputs;
  std::vector<int32_t> targets;
  // Empty: every position counts. Otherwise 1.0 where the target counts (the answer positions of a
  // synthetic task), 0.0 elsewhere; same shape as targets.
  std::vector<float> loss_mask;
};

enum class Split { kTrain, kValidation };

// A document of a split's stream: its first position (the token that starts it) and its length.
struct DocumentSpan {
  int64_t start = 0;
  int64_t tokens = 0;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;

  // Number of distinct token ids the source emits (256 for byte-level text).
  virtual int64_t vocab_size() const = 0;

  // The index-th batch of a split. Training batches sample windows (or task instances) from a
  // counter-based RNG keyed by (seed, index, row); validation batches enumerate a fixed set of windows
  // of the validation split (index wraps around when the split is exhausted) or, for synthetic tasks,
  // instances keyed by (data.split_seed, index, row), the same for every training seed. seq_len may
  // differ from data.seq_len (evaluation beyond the training length); a split shorter than a window is
  // read circularly. REQUIRES: index >= 0, batch_size >= 0, seq_len >= 1.
  virtual TokenBatch Batch(Split split, int64_t index, int64_t batch_size, int64_t seq_len) const = 0;

  // Tokens in a split (synthetic tasks: 0, unbounded).
  virtual int64_t SplitTokens(Split split) const = 0;

  // Provenance recorded with the trial: source, path, sizes, SHA-256 of the bytes read, package
  // version of the builtin corpus.
  virtual nlohmann::json Describe() const = 0;

  // How many UTF-8 bytes each token id stands for (index: id), for bits per byte (docs/science.md
  // section 11): all 1 for byte-level text, the manifest's lengths for a prepared folder of shards;
  // null where the source does not know (plain shards, synthetic tasks).
  virtual const std::vector<int32_t>* TokenByteLengths() const { return nullptr; }
};

// Builds the source named by config.source. `seed` seeds training-batch sampling.
// Errors: NOT_FOUND for missing files (with the path and, for builtin, how to install it); DATA_LOSS
// for shards and manifests that are unusable (token id >= vocab_size, odd file size, a bad header or
// manifest: TokenShards::Open) and a builtin corpus that is not the one its manifest was made from;
// INVALID_ARGUMENT for a config the data cannot serve (an empty or too short split, a vocab_size other
// than a manifest's).
StatusOr<std::unique_ptr<BatchSource>> MakeBatchSource(const DataConfig& config, uint64_t seed);

}  // namespace rung
