// core/data/token_shards.h
//
// TokenShards: pre-tokenised data as flat little-endian uint16 or uint32 token ids (data.token_bytes),
// memory-mapped read-only. Backs the "shards" source.
//
// Loading:
//   - data.path is a file, or a folder whose *.bin files (not recursive) are read in sorted name order
//     as one token stream.
//   - Validation: the files of data.val_path (same rules) if given, else the last val_fraction of the
//     stream's tokens (the training split is everything before them).
//   - Checks at load: each file's size is a multiple of token_bytes; every id is < data.vocab_size. Files
//     up to 1 GiB are scanned in full; larger ones are sampled (their first and last MiB and 256 evenly
//     spaced 64 KiB blocks), and Describe() says which ("ids_checked": "all" | "sampled").
//   - Provenance: hashing whole multi-GB shards is too slow for every trial start, so each file is
//     recorded by its size and the SHA-256 of its first MiB ("sha256_first_mib").
//
// Batches follow core/data/sampling.h; windows may cross file boundaries. loss_mask is empty.
//
// If a sampled file turns out to hold an id >= vocab_size inside a batch, Batch() prints the file and
// offset to stderr and aborts the process: the trainer would otherwise index out of its embedding.
//
// Thread safety: immutable after loading; const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/config/data_config.h"
#include "core/data/batch_source.h"

namespace rung {

class TokenShards : public BatchSource {
 public:
  // Errors: NOT_FOUND if a path does not exist or a folder holds no *.bin file; INVALID_ARGUMENT for
  // token_bytes other than 2 or 4, vocab_size <= 0, a file size that is not a multiple of token_bytes, an
  // id >= vocab_size (naming the file and token offset), or a split shorter than seq_len + 1 tokens;
  // INTERNAL if a file cannot be mapped.
  static StatusOr<std::unique_ptr<TokenShards>> Open(const DataConfig& config, uint64_t seed);
  ~TokenShards() override;

  int64_t vocab_size() const override { return vocab_size_; }
  TokenBatch Batch(Split split, int64_t index, int64_t batch_size, int64_t seq_len) const override;
  int64_t SplitTokens(Split split) const override;

  // {"source": "shards", "path", "val_path", "token_bytes", "vocab_size",
  //  "split": "val_path" | "tail_fraction", "val_fraction", "tokens": {"train", "validation"},
  //  "files": [{"path", "bytes", "tokens", "sha256_first_mib", "ids_checked"}]}
  nlohmann::json Describe() const override;

  // The token at `position` of a split's stream. REQUIRES: 0 <= position < SplitTokens(split).
  int64_t Token(Split split, int64_t position) const;

  struct MappedFile;  // one memory-mapped shard (defined in the .cc)
  struct Segment {    // a run of one file's tokens inside a split's stream
    const MappedFile* file;
    int64_t first_token;  // within the file
    int64_t tokens;
  };
  struct Stream {  // a split: segments in order, with the stream position where each begins
    std::vector<Segment> segments;
    std::vector<int64_t> starts;
    int64_t tokens = 0;
  };

 private:
  TokenShards() = default;
  const Stream& SplitStream(Split split) const { return split == Split::kTrain ? train_ : validation_; }
  void CopyTokens(const Stream& stream, int64_t start, int64_t count, int32_t* out) const;

  DataConfig config_;
  uint64_t seed_ = 0;
  int64_t vocab_size_ = 0;
  int64_t token_bytes_ = 2;
  std::vector<std::unique_ptr<MappedFile>> files_;
  Stream train_;
  Stream validation_;
};

// Shard files named by a path: the file itself, or the *.bin files directly in a folder, sorted.
// NOT_FOUND if the path does not exist or the folder holds no *.bin file.
StatusOr<std::vector<std::string>> ListShardFiles(const std::string& path);

}  // namespace rung
