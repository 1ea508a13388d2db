#include "tools/rung-data/prepare.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <filesystem>

#include "core/common/atomic_file.h"
#include "core/common/file_bytes.h"
#include "core/common/folder_lock.h"
#include "core/common/sha256.h"
#include "core/data/byte_corpus.h"
#include "core/data/llmc_shard_format.h"
#include "core/data/token_manifest.h"
#include "tools/rung-data/document_encoding.h"
#include "tools/rung-data/output_folder.h"
#include "tools/rung-data/text_tokenizer.h"

namespace rung::data_tool {
namespace {

namespace fs = std::filesystem;

// The number of shards of at most `shard_tokens` two streams of `train` and `val` tokens make.
int64_t ShardCount(int64_t train, int64_t val, int64_t shard_tokens) {
  return (train + shard_tokens - 1) / shard_tokens + (val + shard_tokens - 1) / shard_tokens;
}

// Refuses a shard_tokens that cuts the streams into more than kMaxShards shards, naming the least that
// would do.
Status CheckShardCount(int64_t train, int64_t val, int64_t shard_tokens) {
  const int64_t shards = ShardCount(train, val, shard_tokens);
  if (shards <= kMaxShards) return Status::Ok();
  int64_t low = shard_tokens, high = std::max<int64_t>(train, val);  // ShardCount(high) <= 2
  while (low + 1 < high) {
    const int64_t middle = low + (high - low) / 2;
    (ShardCount(train, val, middle) <= kMaxShards ? high : low) = middle;
  }
  return Status::InvalidArgument("--shard-tokens " + std::to_string(shard_tokens) + " would cut the " +
                                 std::to_string(train) + " train and " + std::to_string(val) + " val tokens into " +
                                 std::to_string(shards) + " shards; a prepared folder holds at most " +
                                 std::to_string(kMaxShards) + ": use --shard-tokens " + std::to_string(high) +
                                 " or more");
}

}  // namespace

StatusOr<PrepareSummary> Prepare(const PrepareOptions& options) {
  if (!(options.val_fraction > 0.0 && options.val_fraction < 1.0)) {
    char value[32];
    std::snprintf(value, sizeof(value), "%g", options.val_fraction);
    return Status::InvalidArgument(std::string("--val-fraction must lie in (0, 1), got ") + value);
  }
  if (options.shard_tokens < 1 || options.shard_tokens > INT32_MAX) {
    return Status::InvalidArgument("--shard-tokens must lie in [1, 2^31), got " + std::to_string(options.shard_tokens));
  }
  RUNG_RETURN_IF_ERROR(CheckEncodingOptions(options.threads, options.token_bytes, options.max_document_bytes));
  RUNG_RETURN_IF_ERROR(CheckOutputFolder(options.out));
  RUNG_ASSIGN_OR_RETURN(const LoadedTokenizer loaded, LoadTextTokenizer(options.tokenizer, options.eot));
  RUNG_ASSIGN_OR_RETURN(const int64_t eot_id, RequireEot(loaded));
  const TextTokenizer* tokenizer = loaded.tokenizer.get();
  const int64_t vocab_size = tokenizer->vocab_size();
  RUNG_ASSIGN_OR_RETURN(const int64_t token_bytes, ShardTokenBytes(options.token_bytes, vocab_size, options.tokenizer));
  DocumentOptions reading = options.documents;
  reading.exclude.push_back(options.out);
  RUNG_ASSIGN_OR_RETURN(const TextDocuments text, ReadTextDocuments(options.inputs, reading));
  for (const std::string& folder : text.skipped_folders) {
    std::fprintf(stderr, "rung-data: not reading %s (rung-data's own output)\n", folder.c_str());
  }
  if (text.documents.size() < 2) {
    return Status::DataLoss("the inputs hold " + std::to_string(text.documents.size()) +
                            " document; a train/validation split by document needs two or more "
                            "(--split-on SEP cuts a file into documents)");
  }
  std::error_code error;
  fs::create_directories(options.out, error);
  if (error) return Status::Internal("cannot create " + options.out + ": " + error.message());
  RUNG_ASSIGN_OR_RETURN(const FolderLock lock, FolderLock::Acquire(options.out, "rung-data prepare"));

  PrepareSummary summary;
  RUNG_ASSIGN_OR_RETURN(EncodedDocuments encoded,
                        EncodeDocuments(*tokenizer, text.documents, text.bytes, /*special_tokens=*/true, options.threads,
                                        options.max_document_bytes));
  const std::vector<std::vector<int>>& ids = encoded.ids;
  summary.documents_split = encoded.documents_split;
  summary.encode_seconds = encoded.seconds;
  summary.encoded_bytes = text.bytes;
  summary.eot_id = eot_id;
  summary.eot_token = loaded.eot_token;
  summary.vocab_size = vocab_size;

  const std::vector<bool> in_validation = ValidationDocuments(text.documents.size(), options.seed, options.val_fraction);
  int64_t split_tokens[2] = {0, 0};
  for (size_t d = 0; d < text.documents.size(); ++d) {
    split_tokens[in_validation[d] ? 1 : 0] += 1 + static_cast<int64_t>(ids[d].size());
  }
  RUNG_RETURN_IF_ERROR(CheckShardCount(split_tokens[0], split_tokens[1], options.shard_tokens));

  TokenManifest manifest;
  manifest.tokenizer_file = loaded.file_name;
  manifest.tokenizer_sha256 = Sha256Hex(loaded.bytes);
  manifest.tokenizer_type = loaded.type;
  if (loaded.bos_added) manifest.bos_id = *loaded.bos_id;
  for (const SourceFile& source : text.sources) manifest.sources.push_back({source.path, source.bytes, source.sha256});
  manifest.eot_id = summary.eot_id;
  manifest.vocab_size = vocab_size;
  manifest.token_bytes = token_bytes;
  manifest.val_fraction = options.val_fraction;
  manifest.seed = options.seed;
  manifest.shard_tokens = options.shard_tokens;
  manifest.split_on = options.documents.split_on;
  manifest.text_field = options.documents.text_field;
  manifest.max_document_bytes = options.max_document_bytes;
  manifest.documents_split = summary.documents_split;
  manifest.token_byte_lengths = tokenizer->TokenByteLengths();

  for (int split = 0; split < 2; ++split) {
    const std::string name = split == 0 ? "train" : "val";
    std::vector<int32_t> shard;
    ManifestShard entry;
    int64_t index = 0;
    auto flush = [&]() -> Status {
      if (shard.empty()) return Status::Ok();
      char file[32];
      std::snprintf(file, sizeof(file), "%s_%06lld.bin", name.c_str(), static_cast<long long>(index++));
      const std::string header = LlmcShardHeader(static_cast<int64_t>(shard.size()), token_bytes);
      const std::string body = LlmcShardTokens(shard, token_bytes);
      Sha256Hasher hasher;
      hasher.Update(header);
      hasher.Update(body);
      entry.file = file;
      entry.split = name;
      entry.tokens = static_cast<int64_t>(shard.size());
      entry.sha256 = hasher.FinishHex();
      const std::string path = (fs::path(options.out) / file).string();
      StatusOr<std::string> existing = fs::exists(path, error) ? Sha256FileHex(path) : StatusOr<std::string>(std::string());
      if (existing.ok() && *existing == entry.sha256) {
        ++summary.shards_kept;
      } else {
        RUNG_RETURN_IF_ERROR(WriteFileAtomically(path, {header, body}));
        ++summary.shards_written;
      }
      manifest.shards.push_back(entry);
      entry = ManifestShard{};
      shard.clear();
      return Status::Ok();
    };
    for (size_t d = 0; d < text.documents.size(); ++d) {
      if (in_validation[d] != (split == 1)) continue;
      ++summary.documents[split];
      summary.tokens[split] += 1 + static_cast<int64_t>(ids[d].size());
      auto push = [&](int32_t token) -> Status {
        shard.push_back(token);
        entry.bytes += manifest.token_byte_lengths[static_cast<size_t>(token)];
        if (static_cast<int64_t>(shard.size()) == options.shard_tokens) RUNG_RETURN_IF_ERROR(flush());
        return Status::Ok();
      };
      // The document counts in the shard its end-of-text token (its first token) lands in.
      ++entry.documents;
      RUNG_RETURN_IF_ERROR(push(static_cast<int32_t>(summary.eot_id)));
      for (int id : ids[d]) {
        if (id < 0 || id >= vocab_size) {
          return Status::Internal("tokenizer returned id " + std::to_string(id) + " outside its vocabulary");
        }
        RUNG_RETURN_IF_ERROR(push(id));
      }
    }
    RUNG_RETURN_IF_ERROR(flush());
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((fs::path(options.out) / loaded.file_name).string(), {loaded.bytes}));
  const std::string manifest_text = manifest.ToJson().dump(1) + "\n";
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((fs::path(options.out) / kTokenManifestFile).string(), {manifest_text}));
  return summary;
}

}  // namespace rung::data_tool
