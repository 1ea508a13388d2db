// core/data/token_shards.h
//
// TokenShards: pre-tokenised data, memory-mapped read-only: llm.c shards (a 1024-byte header, then
// uint16 or uint32 tokens: core/data/llmc_shard_format.h) or flat little-endian uint16/uint32 token ids
// (data.token_bytes), as data.format says (auto sniffs each file). Backs the "shards" source.
//
// Mapping: at most TokenShardsOptions::max_mapped_files files are mapped at once (core/data/
// shard_mappings.h): loading maps, checks and lets go of each file in turn, and batches map a file
// again when they read it, dropping the least recently used mapping. A folder of any number of shards
// opens (the kernel allows a process about 65,000 mappings).
//
// Loading:
//   - data.path is a file, or a folder whose *.bin files (not recursive) are read in sorted name order
//     as one token stream, or a prepared folder (one holding manifest.json, core/data/token_manifest.h):
//     its train shards in manifest order are the training split, its val shards the validation split;
//     data.vocab_size must equal the manifest's and data.eot_token, if set, its eot_id.
//   - Validation otherwise: the files of data.val_path (same rules) if given; else, in a folder that
//     holds files named for both splits the way llm.c names them (a part of the name before ".bin", cut
//     at '_', '-' and '.', is "train" or "val": fineweb_train_000001.bin and fineweb_val_000000.bin,
//     tinyshakespeare_train.bin and tinyshakespeare_val.bin), the val files, the train files being the
//     training split (each in sorted order; a file named for neither beside them is INVALID_ARGUMENT);
//     else the last val_fraction of the stream's tokens (the training split is everything before them).
//   - Checks at load: each file's layout (ReadShardLayout: header magic, version and token count against
//     the file's length; a raw file's size a multiple of its width); every id is < data.vocab_size. Files
//     up to 1 GiB are scanned in full; larger ones are sampled (their first and last MiB and 256 evenly
//     spaced 64 KiB blocks), and Describe() says which ("ids_checked": "all" | "sampled").
//   - A prepared folder's shards are hashed whole and checked against the manifest's SHA-256 (a shard
//     edited in place is DATA_LOSS naming it, the manifest's and the file's SHA-256) the first time
//     the folder is opened on this machine; core/data/shard_verification_record.h records which were,
//     by size, mtime, ctime and inode, so later opens hash only what changed since.
//   - Provenance: hashing whole multi-GB shards of other folders is too slow for every trial start, so
//     each file is recorded by its size and the SHA-256 of its first MiB ("sha256_first_mib"); a
//     prepared folder's files also say whether their whole SHA-256 was verified at this open ("now") or
//     at an earlier one, the file unchanged since ("cached").
//
// Batches follow core/data/sampling.h; windows may cross file boundaries. loss_mask is empty. With
// data.eval_min_doc_tokens > 0, validation windows keep to the validation documents (each starting at
// data.eot_token) of at least that many tokens; none that long is INVALID_ARGUMENT.
//
// If a sampled file turns out to hold an id >= vocab_size inside a batch, Batch() prints the file and
// offset to stderr and aborts the process: the trainer would otherwise index out of its embedding. So
// does a batch that needs a file mapped again when that fails (the file was removed, or its size changed
// since loading).
//
// Thread safety: const methods may be called concurrently (the mappings are shared under a lock);
// nothing else changes after loading.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/config/data_config.h"
#include "core/data/batch_source.h"
#include "core/data/shard_mappings.h"
#include "core/data/token_manifest.h"

namespace rung {

struct TokenShardsOptions {
  // The most shard files mapped at once (least recently used dropped first). Tests lower it.
  int64_t max_mapped_files = 256;
};

class TokenShards : public BatchSource {
 public:
  // Errors, by what the user has to change (rung-train exits 2 for INVALID_ARGUMENT, 4 for NOT_FOUND and
  // DATA_LOSS):
  //   NOT_FOUND: a path does not exist, a folder holds no *.bin file, a shard cannot be opened.
  //   DATA_LOSS (the data is unusable): a file whose layout is wrong (ReadShardLayout), an id >=
  //     vocab_size (naming the file and token and byte offsets), a manifest that does not parse
  //     (ParseTokenManifest) or lacks a split, a shard whose SHA-256 or token count disagrees with its
  //     manifest.
  //   INVALID_ARGUMENT (the config is wrong): token_bytes other than 2 or 4, an unknown format,
  //     vocab_size <= 0, a config that disagrees with the manifest (vocab_size, eot_token, val_path), a
  //     folder with files named for each split and for neither, a split shorter than seq_len + 1
  //     tokens, no validation document of eval_min_doc_tokens.
  //   INTERNAL: a file cannot be mapped.
  static StatusOr<std::unique_ptr<TokenShards>> Open(const DataConfig& config, uint64_t seed,
                                                     const TokenShardsOptions& options = {});
  ~TokenShards() override;

  int64_t vocab_size() const override { return vocab_size_; }
  TokenBatch Batch(Split split, int64_t index, int64_t batch_size, int64_t seq_len) const override;
  int64_t SplitTokens(Split split) const override;

  // {"source": "shards", "path", "val_path", "token_bytes", "vocab_size",
  //  "format", "split": "manifest" | "val_path" | "file_names" | "tail_fraction", "val_fraction",
  //  "tokens": {"train", "validation"},
  //  "files": [{"path", "bytes", "format": "llmc" | "raw", "token_bytes", "tokens", "sha256_first_mib",
  //             "ids_checked", "sha256_verified": "now" | "cached" (prepared folders only)}],
  //  "manifest": {"tokenizer_sha256", "tokenizer_type", "eot_id", "sources"} (prepared folders)}
  nlohmann::json Describe() const override;

  // The manifest's byte length of each id (a prepared folder); null otherwise.
  const std::vector<int32_t>* TokenByteLengths() const override;

  // The token at `position` of a split's stream. REQUIRES: 0 <= position < SplitTokens(split).
  int64_t Token(Split split, int64_t position) const;

  struct ShardFile;  // one shard file, as loading found it (defined in the .cc)
  struct Segment {   // a run of one file's tokens inside a split's stream
    const ShardFile* file;
    int64_t first_token;  // within the file
    int64_t tokens;
  };
  struct Stream {  // a split: segments in order, with the stream position where each begins
    std::vector<Segment> segments;
    std::vector<int64_t> starts;
    int64_t tokens = 0;
  };

 private:
  explicit TokenShards(size_t max_mapped_files);
  const Stream& SplitStream(Split split) const { return split == Split::kTrain ? train_ : validation_; }
  void CopyTokens(const Stream& stream, int64_t start, int64_t count, int32_t* out) const;

  DataConfig config_;
  uint64_t seed_ = 0;
  int64_t vocab_size_ = 0;
  std::optional<TokenManifest> manifest_;
  std::string split_;  // how the splits were made: Describe()'s "split"
  std::vector<DocumentSpan> eval_documents_;  // data.eval_min_doc_tokens: the long validation documents
  std::vector<std::unique_ptr<ShardFile>> files_;
  mutable ShardMappings mappings_;  // files_[i]->index is its index here
  Stream train_;
  Stream validation_;
};

// Shard files named by a path: the file itself, or the *.bin files directly in a folder, sorted.
// NOT_FOUND if the path does not exist or the folder holds no *.bin file.
StatusOr<std::vector<std::string>> ListShardFiles(const std::string& path);

}  // namespace rung
