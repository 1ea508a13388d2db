#include "core/data/token_shards.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/common/sha256.h"
#include "core/data/llmc_shard_format.h"
#include "core/data/sampling.h"
#include "core/data/shard_mappings.h"
#include "core/data/shard_verification_record.h"
#include "core/data/token_manifest.h"

namespace rung {

// One shard file: what the load-time checks found. Its tokens are read through mappings_.
struct TokenShards::ShardFile {
  std::string path;
  size_t index = 0;  // in mappings_
  int64_t bytes = 0;
  ShardLayout layout;
  int64_t tokens = 0;
  int64_t token_bytes = 2;
  std::string sha256_first_mib;
  bool ids_fully_checked = false;
  std::string sha256_verified;  // prepared folders: "now" or "cached"
};

namespace {

namespace fs = std::filesystem;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kFullScanLimitBytes = int64_t{1} << 30;
constexpr int64_t kSampledBlocks = 256;
constexpr int64_t kSampledBlockBytes = 64 << 10;

inline int64_t DecodeToken(const unsigned char* p, int64_t token_bytes) {
  if (token_bytes == 2) return static_cast<int64_t>(p[0] | (uint32_t{p[1]} << 8));
  return static_cast<int64_t>(uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) |
                              (uint32_t{p[3]} << 24));
}

// Reads a mapped file's layout and the SHA-256 of its first MiB into *file.
Status ReadLayout(const ShardMappings::Mapping& mapped, const DataConfig& config, TokenShards::ShardFile* file) {
  file->bytes = mapped.bytes;
  const std::string_view head(reinterpret_cast<const char*>(mapped.data),
                              static_cast<size_t>(std::min(file->bytes, kLlmcHeaderBytes)));
  RUNG_ASSIGN_OR_RETURN(file->layout, ReadShardLayout(file->path, head, file->bytes, config.format, config.token_bytes));
  file->tokens = file->layout.tokens;
  file->token_bytes = file->layout.token_bytes;
  file->sha256_first_mib = Sha256Hex(
      std::string_view(reinterpret_cast<const char*>(mapped.data), static_cast<size_t>(std::min(file->bytes, kMiB))));
  return Status::Ok();
}

// The first token of a mapped file.
inline const unsigned char* TokenData(const ShardMappings::Mapping& mapped, const TokenShards::ShardFile& file) {
  return mapped.data == nullptr ? nullptr : mapped.data + file.layout.header_bytes;
}

// DATA_LOSS naming the first id >= vocab_size among tokens [first, first + count) of a file.
Status CheckIds(const unsigned char* data, const TokenShards::ShardFile& file, int64_t first, int64_t count,
                int64_t vocab_size) {
  const int64_t token_bytes = file.token_bytes;
  const unsigned char* p = data + first * token_bytes;
  for (int64_t t = 0; t < count; ++t, p += token_bytes) {
    const int64_t id = DecodeToken(p, token_bytes);
    if (id >= vocab_size) {
      const int64_t offset = first + t;
      return Status::DataLoss("shard " + file.path + ": token id " + std::to_string(id) + " at token offset " +
                                     std::to_string(offset) + " (byte offset " +
                                     std::to_string(file.layout.header_bytes + offset * token_bytes) +
                                     ") is >= data.vocab_size = " +
                                     std::to_string(vocab_size));
    }
  }
  return Status::Ok();
}

// Scans every id of files up to kFullScanLimitBytes; samples larger ones (see the header).
Status CheckFileIds(const ShardMappings::Mapping& mapped, TokenShards::ShardFile* file, int64_t vocab_size) {
  const unsigned char* data = TokenData(mapped, *file);
  const int64_t token_bytes = file->token_bytes;
  if (file->bytes <= kFullScanLimitBytes) {
    file->ids_fully_checked = true;
    return CheckIds(data, *file, 0, file->tokens, vocab_size);
  }
  const int64_t edge_tokens = kMiB / token_bytes;
  RUNG_RETURN_IF_ERROR(CheckIds(data, *file, 0, edge_tokens, vocab_size));
  RUNG_RETURN_IF_ERROR(CheckIds(data, *file, file->tokens - edge_tokens, edge_tokens, vocab_size));
  const int64_t block_tokens = kSampledBlockBytes / token_bytes;
  for (int64_t block = 0; block < kSampledBlocks; ++block) {
    const int64_t first = (file->tokens - block_tokens) / (kSampledBlocks - 1) * block;
    RUNG_RETURN_IF_ERROR(CheckIds(data, *file, first, block_tokens, vocab_size));
  }
  return Status::Ok();
}

void AppendSegment(TokenShards::Stream* stream, const TokenShards::ShardFile* file, int64_t first, int64_t tokens) {
  if (tokens <= 0) return;
  stream->starts.push_back(stream->tokens);
  stream->segments.push_back({file, first, tokens});
  stream->tokens += tokens;
}

// What a shard's file name says it holds, the way llm.c names its splits: a part of the name before
// ".bin", cut at '_', '-' and '.', that is "val" or "train" (fineweb_val_000000.bin,
// tinyshakespeare_train.bin, val_000000.bin). A name with both or neither says nothing.
enum class NamedSplit { kNone, kTrain, kVal };

NamedSplit SplitNamed(const std::string& path) {
  const std::string stem = fs::path(path).stem().string();
  bool train = false, val = false;
  for (size_t begin = 0; begin <= stem.size();) {
    size_t end = stem.find_first_of("_-.", begin);
    if (end == std::string::npos) end = stem.size();
    const std::string_view part(stem.data() + begin, end - begin);
    train = train || part == "train";
    val = val || part == "val";
    begin = end + 1;
  }
  return train == val ? NamedSplit::kNone : train ? NamedSplit::kTrain : NamedSplit::kVal;
}

// Splits the files of a folder by their names (SplitNamed) when some are named train and some val:
// true, with the two lists in order. False, lists untouched, when only one kind is named.
// INVALID_ARGUMENT when files named for each split sit beside files named for neither.
StatusOr<bool> SplitByFileNames(const std::string& folder, const std::vector<std::string>& paths,
                                std::vector<std::string>* train, std::vector<std::string>* val) {
  std::vector<std::string> named[3];
  for (const std::string& path : paths) named[static_cast<int>(SplitNamed(path))].push_back(path);
  const std::vector<std::string>& unnamed = named[static_cast<int>(NamedSplit::kNone)];
  if (named[static_cast<int>(NamedSplit::kTrain)].empty() || named[static_cast<int>(NamedSplit::kVal)].empty()) {
    return false;
  }
  if (!unnamed.empty()) {
    return Status::InvalidArgument(
        "shard folder '" + folder + "' holds files named for the train and val splits (" +
        fs::path(named[static_cast<int>(NamedSplit::kTrain)].front()).filename().string() + ", " +
        fs::path(named[static_cast<int>(NamedSplit::kVal)].front()).filename().string() + ") and " +
        std::to_string(unnamed.size()) + " named for neither (" + fs::path(unnamed.front()).filename().string() +
        "): move those out, or give the validation files as data.val_path");
  }
  *train = std::move(named[static_cast<int>(NamedSplit::kTrain)]);
  *val = std::move(named[static_cast<int>(NamedSplit::kVal)]);
  return true;
}

// A prepared folder's manifest agrees with the data block that reads it.
Status CheckAgainstManifest(const DataConfig& config, const TokenManifest& manifest) {
  const std::string where = (fs::path(config.path) / kTokenManifestFile).string();
  if (config.vocab_size != manifest.vocab_size) {
    return Status::InvalidArgument("data.vocab_size is " + std::to_string(config.vocab_size) + ", but " + where +
                                   " says vocab_size " + std::to_string(manifest.vocab_size) +
                                   ": set data.vocab_size: " + std::to_string(manifest.vocab_size));
  }
  if (config.eot_token >= 0 && config.eot_token != manifest.eot_id) {
    return Status::InvalidArgument("data.eot_token is " + std::to_string(config.eot_token) + ", but " + where +
                                   " says eot_id " + std::to_string(manifest.eot_id) +
                                   ": set data.eot_token: " + std::to_string(manifest.eot_id));
  }
  if (!config.val_path.empty()) {
    return Status::InvalidArgument("data.val_path is set, but " + where +
                                   " already splits the data (its val shards); leave data.val_path out");
  }
  bool has_train = false, has_val = false;
  for (const ManifestShard& shard : manifest.shards) (shard.split == "train" ? has_train : has_val) = true;
  if (!has_train || !has_val) {
    return Status::DataLoss(where + " lists no " + std::string(has_train ? "val" : "train") +
                                   " shard (prepare with more documents, or another --val-fraction)");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<std::string>> ListShardFiles(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) return Status::NotFound("shard path '" + path + "' does not exist");
  if (!fs::is_directory(status)) return std::vector<std::string>{path};
  std::vector<std::string> files;
  for (fs::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".bin" && it->is_regular_file()) files.push_back(it->path().string());
  }
  if (error) return Status::NotFound("cannot read shard folder '" + path + "': " + error.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) return Status::NotFound("shard folder '" + path + "' holds no *.bin file");
  return files;
}

TokenShards::TokenShards(size_t max_mapped_files) : mappings_(max_mapped_files) {}
TokenShards::~TokenShards() = default;

StatusOr<std::unique_ptr<TokenShards>> TokenShards::Open(const DataConfig& config, uint64_t seed,
                                                         const TokenShardsOptions& options) {
  if (config.token_bytes != 2 && config.token_bytes != 4) {
    return Status::InvalidArgument("data.token_bytes must be 2 (uint16) or 4 (uint32), got " +
                                   std::to_string(config.token_bytes));
  }
  if (!IsShardFormat(config.format)) {
    return Status::InvalidArgument("data.format must be auto, llmc, raw16 or raw32, got '" + config.format + "'");
  }
  if (config.vocab_size <= 0 || config.vocab_size > INT32_MAX) {
    return Status::InvalidArgument("data.vocab_size must lie in [1, 2^31), got " + std::to_string(config.vocab_size));
  }
  if (options.max_mapped_files < 1) {
    return Status::InvalidArgument("max_mapped_files must be at least 1, got " + std::to_string(options.max_mapped_files));
  }
  std::unique_ptr<TokenShards> shards(new TokenShards(static_cast<size_t>(options.max_mapped_files)));
  shards->config_ = config;
  shards->seed_ = seed;
  shards->vocab_size_ = config.vocab_size;

  // Maps and checks one file, appending it to files_; its mapping goes to mappings_, which keeps at most
  // max_mapped_files of them.
  // With `verify` (a prepared folder's shard), its whole SHA-256 is checked against the manifest's first
  // unless `record` says it was in this state before.
  ShardVerificationRecord record;
  auto map_one = [&](const std::string& file_path, const ManifestShard* verify = nullptr) -> Status {
    auto file = std::make_unique<ShardFile>();
    file->path = file_path;
    RUNG_ASSIGN_OR_RETURN(std::shared_ptr<const ShardMappings::Mapping> mapped, ShardMappings::Map(file_path));
    if (verify != nullptr) {
      const ShardVerificationRecord::FileState state{mapped->bytes, mapped->mtime_ns, mapped->ctime_ns, mapped->inode,
                                                     verify->sha256};
      if (record.Verified(verify->file, state)) {
        file->sha256_verified = "cached";
      } else {
        const std::string actual = Sha256Hex(std::string_view(reinterpret_cast<const char*>(mapped->data),
                                                              static_cast<size_t>(mapped->bytes)));
        if (actual != verify->sha256) {
          return Status::DataLoss("shard " + file_path + ": its SHA-256 is " + actual + ", but " +
                                  (fs::path(config.path) / kTokenManifestFile).string() + " says " + verify->sha256 +
                                  " (changed since `rung-data prepare` wrote it; prepare the folder again)");
        }
        file->sha256_verified = "now";
      }
      record.Keep(verify->file, state);
    }
    RUNG_RETURN_IF_ERROR(ReadLayout(*mapped, config, file.get()));
    RUNG_RETURN_IF_ERROR(CheckFileIds(*mapped, file.get(), config.vocab_size));
    file->index = shards->mappings_.Add(file_path, std::move(mapped));
    shards->files_.push_back(std::move(file));
    return Status::Ok();
  };

  if (HasTokenManifest(config.path)) {
    RUNG_ASSIGN_OR_RETURN(TokenManifest manifest, ReadTokenManifest(config.path));
    RUNG_RETURN_IF_ERROR(CheckAgainstManifest(config, manifest));
    std::vector<const ManifestShard*> ordered;
    for (const char* split : {"train", "val"}) {
      for (const ManifestShard& shard : manifest.shards) {
        if (shard.split == split) ordered.push_back(&shard);
      }
    }
    record = ShardVerificationRecord::Load(config.path);
    Status loaded = Status::Ok();
    for (const ManifestShard* shard : ordered) {
      const std::string file_path = (fs::path(config.path) / shard->file).string();
      loaded = map_one(file_path, shard);
      if (!loaded.ok()) break;
      const ShardFile& file = *shards->files_.back();
      if (file.tokens != shard->tokens) {
        loaded = Status::DataLoss("shard " + file_path + " holds " + std::to_string(file.tokens) +
                                  " tokens, but its manifest says " + std::to_string(shard->tokens) +
                                  " (changed since `rung-data prepare`? prepare it again)");
        break;
      }
      AppendSegment(shard->split == "train" ? &shards->train_ : &shards->validation_, &file, 0, file.tokens);
    }
    // The shards verified so far are recorded even when a later one fails.
    if (record.changed()) {
      if (StatusOr<std::string> saved = record.Save(); !saved.ok()) {
        std::fprintf(stderr, "rung: warning: cannot record which shards of %s are verified, so they are hashed "
                     "again next time: %s\n", config.path.c_str(), saved.status().message().c_str());
      }
    }
    RUNG_RETURN_IF_ERROR(loaded);
    shards->manifest_ = std::move(manifest);
    shards->split_ = "manifest";
  } else {
    RUNG_ASSIGN_OR_RETURN(const std::vector<std::string> paths, ListShardFiles(config.path));
    std::vector<std::string> train_paths, val_paths;
    if (!config.val_path.empty()) {
      train_paths = paths;
      RUNG_ASSIGN_OR_RETURN(val_paths, ListShardFiles(config.val_path));
      shards->split_ = "val_path";
    } else {
      RUNG_ASSIGN_OR_RETURN(const bool by_names, SplitByFileNames(config.path, paths, &train_paths, &val_paths));
      shards->split_ = by_names ? "file_names" : "tail_fraction";
    }
    if (shards->split_ != "tail_fraction") {
      for (const std::string& file_path : train_paths) {
        RUNG_RETURN_IF_ERROR(map_one(file_path));
        AppendSegment(&shards->train_, shards->files_.back().get(), 0, shards->files_.back()->tokens);
      }
      for (const std::string& file_path : val_paths) {
        RUNG_RETURN_IF_ERROR(map_one(file_path));
        AppendSegment(&shards->validation_, shards->files_.back().get(), 0, shards->files_.back()->tokens);
      }
    } else {
      for (const std::string& file_path : paths) RUNG_RETURN_IF_ERROR(map_one(file_path));
      int64_t total = 0;
      for (const auto& file : shards->files_) total += file->tokens;
      const auto held_out = static_cast<int64_t>(std::llround(static_cast<double>(total) * config.val_fraction));
      int64_t train_left = total - held_out;
      for (const auto& file : shards->files_) {
        const int64_t to_train = std::min(train_left, file->tokens);
        AppendSegment(&shards->train_, file.get(), 0, to_train);
        AppendSegment(&shards->validation_, file.get(), to_train, file->tokens - to_train);
        train_left -= to_train;
      }
    }
  }

  for (Split split : {Split::kTrain, Split::kValidation}) {
    const int64_t tokens = shards->SplitTokens(split);
    if (tokens < config.seq_len + 1) {
      return Status::InvalidArgument(std::string(split == Split::kTrain ? "training" : "validation") +
                                     " split of the shards has " + std::to_string(tokens) +
                                     " tokens, fewer than data.seq_len + 1 = " + std::to_string(config.seq_len + 1));
    }
  }
  if (config.eval_min_doc_tokens > 0) {
    if (config.eot_token < 0) {
      return Status::InvalidArgument("data.eval_min_doc_tokens needs data.eot_token (the token between documents)");
    }
    // One pass over the validation stream, segment by segment.
    std::vector<int64_t> starts;
    const Stream& validation = shards->validation_;
    for (size_t s = 0; s < validation.segments.size(); ++s) {
      const Segment& run = validation.segments[s];
      RUNG_ASSIGN_OR_RETURN(std::shared_ptr<const ShardMappings::Mapping> mapped,
                            shards->mappings_.Get(run.file->index));
      const unsigned char* p = TokenData(*mapped, *run.file) + run.first_token * run.file->token_bytes;
      for (int64_t t = 0; t < run.tokens; ++t, p += run.file->token_bytes) {
        if (DecodeToken(p, run.file->token_bytes) == config.eot_token) starts.push_back(validation.starts[s] + t);
      }
    }
    size_t next = 0;
    shards->eval_documents_ = LongDocuments(validation.tokens, config.eval_min_doc_tokens, [&](int64_t p) {
      if (next < starts.size() && starts[next] == p) {
        ++next;
        return true;
      }
      return false;
    });
    if (shards->eval_documents_.empty()) {
      return Status::InvalidArgument("data.eval_min_doc_tokens = " + std::to_string(config.eval_min_doc_tokens) +
                                     ": no validation document of the shards (" + std::to_string(starts.size()) +
                                     " begin at data.eot_token " + std::to_string(config.eot_token) +
                                     ") is that long; a smaller value, or data with longer documents");
    }
  }
  return shards;
}

void TokenShards::CopyTokens(const Stream& stream, int64_t start, int64_t count, int32_t* out) const {
  size_t segment = static_cast<size_t>(std::upper_bound(stream.starts.begin(), stream.starts.end(), start) -
                                       stream.starts.begin()) - 1;
  int64_t offset = start - stream.starts[segment];
  while (count > 0) {
    const Segment& run = stream.segments[segment];
    const int64_t take = std::min(count, run.tokens - offset);
    const int64_t token_bytes = run.file->token_bytes;
    StatusOr<std::shared_ptr<const ShardMappings::Mapping>> mapped = mappings_.Get(run.file->index);
    if (!mapped.ok()) {
      std::fprintf(stderr, "rung: %s\n", mapped.status().ToString().c_str());
      std::abort();
    }
    const unsigned char* p = TokenData(**mapped, *run.file) + (run.first_token + offset) * token_bytes;
    for (int64_t t = 0; t < take; ++t, p += token_bytes) {
      const int64_t id = DecodeToken(p, token_bytes);
      if (id >= vocab_size_) {
        std::fprintf(stderr, "rung: shard %s: token id %lld at token offset %lld is >= data.vocab_size = %lld\n",
                     run.file->path.c_str(), static_cast<long long>(id),
                     static_cast<long long>(run.first_token + offset + t), static_cast<long long>(vocab_size_));
        std::abort();
      }
      *out++ = static_cast<int32_t>(id);
    }
    count -= take;
    offset = 0;
    ++segment;
  }
}

TokenBatch TokenShards::Batch(Split split, int64_t index, int64_t batch_size, int64_t seq_len) const {
  const Stream& stream = SplitStream(split);
  return MakeWindowBatch(split, index, batch_size, seq_len, seed_, stream.tokens,
                         [this, &stream](int64_t start, int64_t count, int32_t* out) {
                           CopyTokens(stream, start, count, out);
                         },
                         &eval_documents_);
}

int64_t TokenShards::SplitTokens(Split split) const { return SplitStream(split).tokens; }

int64_t TokenShards::Token(Split split, int64_t position) const {
  int32_t token = 0;
  CopyTokens(SplitStream(split), position, 1, &token);
  return token;
}

nlohmann::json TokenShards::Describe() const {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& file : files_) {
    files.push_back({{"path", file->path},
                     {"bytes", file->bytes},
                     {"format", file->layout.llmc ? "llmc" : "raw"},
                     {"token_bytes", file->token_bytes},
                     {"tokens", file->tokens},
                     {"sha256_first_mib", file->sha256_first_mib},
                     {"ids_checked", file->ids_fully_checked ? "all" : "sampled"}});
    if (!file->sha256_verified.empty()) files.back()["sha256_verified"] = file->sha256_verified;
  }
  nlohmann::json description = {
      {"source", "shards"},
      {"path", config_.path},
      {"val_path", config_.val_path},
      {"format", config_.format},
      {"token_bytes", config_.token_bytes},
      {"vocab_size", vocab_size_},
      {"split", split_},
      {"val_fraction", config_.val_fraction},
      {"tokens", {{"train", SplitTokens(Split::kTrain)}, {"validation", SplitTokens(Split::kValidation)}}},
      {"files", files},
  };
  if (config_.eval_min_doc_tokens > 0) {
    description["eval_documents"] = {{"min_tokens", config_.eval_min_doc_tokens},
                                     {"documents", eval_documents_.size()}};
  }
  if (manifest_) {
    description["manifest"] = {{"tokenizer_sha256", manifest_->tokenizer_sha256},
                               {"tokenizer_type", manifest_->tokenizer_type},
                               {"eot_id", manifest_->eot_id},
                               {"sources", manifest_->ToJson()["sources"]}};
  }
  return description;
}

const std::vector<int32_t>* TokenShards::TokenByteLengths() const {
  return manifest_ ? &manifest_->token_byte_lengths : nullptr;
}

}  // namespace rung
