#include "core/config/data_config.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "core/common/checked_arithmetic.h"
#include "core/config/config_limits.h"
#include "core/data/token_manifest.h"

namespace rung {

int64_t DocumentStartToken(const DataConfig& config) {
  if (config.source == "shards") return config.eot_token;
  if (config.source == "builtin" && config.builtin_form == "bpe-4096") return kBuiltinBpeEotId;
  if ((config.source == "builtin" || config.source == "text") && !config.doc_separator.empty()) {
    return static_cast<unsigned char>(config.doc_separator[0]);
  }
  return -1;
}

namespace {

// What ResolvePreparedFolder takes from a manifest: its vocabulary and end-of-text id.
struct PreparedFolderIds {
  int64_t vocab_size = 0;
  int64_t eot_id = 0;
};

// The ids of `manifest_path`'s manifest (in `folder`), nullopt for one that does not read. A sweep's
// expansion resolves every cell's config, and a manifest holds a length per token id: the answer is
// kept per file as it is (its size and time), so a folder's manifest is read once per process until it
// changes (docs/performance.md, "Orchestration"). Thread-safe.
std::optional<PreparedFolderIds> ReadPreparedFolderIds(const std::string& folder, const std::string& manifest_path) {
  struct Entry {
    std::uintmax_t bytes = 0;
    std::filesystem::file_time_type written;
    std::optional<PreparedFolderIds> ids;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> read;
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(manifest_path, error);
  const std::filesystem::file_time_type written = std::filesystem::last_write_time(manifest_path, error);
  std::lock_guard<std::mutex> lock(mutex);
  const auto known = read.find(manifest_path);
  if (!error && known != read.end() && known->second.bytes == bytes && known->second.written == written) {
    return known->second.ids;
  }
  StatusOr<TokenManifest> manifest = ReadTokenManifest(folder);
  std::optional<PreparedFolderIds> ids;
  if (manifest.ok()) ids = PreparedFolderIds{manifest->vocab_size, manifest->eot_id};
  if (!error) read[manifest_path] = Entry{bytes, written, ids};
  return ids;
}

}  // namespace

void ResolvePreparedFolder(DataConfig* data, std::vector<ConfigError>* errors) {
  if (data->source != "shards" || data->path.empty() || !HasTokenManifest(data->path)) return;
  const std::string where = (std::filesystem::path(data->path) / kTokenManifestFile).string();
  const std::optional<PreparedFolderIds> manifest = ReadPreparedFolderIds(data->path, where);
  if (!manifest) return;  // the data's reader reports it, naming the manifest and its field
  if (data->vocab_size == 0) {
    data->vocab_size = manifest->vocab_size;
  } else if (data->vocab_size != manifest->vocab_size) {
    errors->push_back({"data.vocab_size", "is " + std::to_string(data->vocab_size) + ", but " + where +
                                              " says vocab_size " + std::to_string(manifest->vocab_size) +
                                              " (leave it out to take the manifest's)"});
  }
  if (data->eot_token == -1) {
    data->eot_token = manifest->eot_id;
  } else if (data->eot_token != manifest->eot_id) {
    errors->push_back({"data.eot_token", "is " + std::to_string(data->eot_token) + ", but " + where +
                                             " says eot_id " + std::to_string(manifest->eot_id) +
                                             " (leave it out to take the manifest's)"});
  }
}

void ValidateDataConfig(const DataConfig& d, std::vector<ConfigError>* errors) {
  auto error = [&](const std::string& path, const std::string& message) { errors->push_back({path, message}); };
  if (d.seq_len < 2) error("data.seq_len", "must be >= 2, got " + std::to_string(d.seq_len));
  if ((d.source == "text" || d.source == "shards") && d.path.empty()) {
    error("data.path", "source '" + d.source + "' needs a path");
  }
  if (d.source == "shards") {
    if (d.token_bytes != 2 && d.token_bytes != 4) error("data.token_bytes", "must be 2 (uint16) or 4 (uint32)");
    if (d.vocab_size <= 0) {
      error("data.vocab_size", "source 'shards' needs the vocabulary size: state it, or point data.path at a "
                               "folder `rung-data prepare` wrote (its manifest.json gives it)");
    }
  }
  if (!(d.val_fraction > 0.0 && d.val_fraction < 1.0) && !(d.source == "shards" && !d.val_path.empty())) {
    error("data.val_fraction", "must lie in (0, 1)");
  }
  if (d.doc_separator.empty()) error("data.doc_separator", "must not be empty");
  if (d.eot_token < -1) error("data.eot_token", "must be a token id, or -1 for none");
  if (d.eot_token >= 0 && d.source != "shards") error("data.eot_token", "only source 'shards' has one");
  if (d.source == "shards" && d.vocab_size > 0 && d.eot_token >= d.vocab_size) {
    error("data.eot_token", "must be below vocab_size " + std::to_string(d.vocab_size));
  }
  if (d.format != "auto" && d.format != "llmc" && d.format != "raw16" && d.format != "raw32") {
    error("data.format", "must be auto, llmc, raw16 or raw32");
  }
  if (d.format != "auto" && d.source != "shards") error("data.format", "only source 'shards' reads shard files");
  if (d.builtin_documents != "chapters" && d.builtin_documents != "books") {
    error("data.builtin_documents", "must be chapters or books");
  }
  if (d.builtin_documents != "chapters" && d.source != "builtin") {
    error("data.builtin_documents", "only source 'builtin' has books");
  }
  if (d.builtin_form != "bytes" && d.builtin_form != "bpe-4096") {
    error("data.builtin_form", "must be bytes or bpe-4096");
  }
  if (d.builtin_form != "bytes" && d.source != "builtin") {
    error("data.builtin_form", "only source 'builtin' has a BPE form");
  }
  if (d.builtin_form == "bpe-4096" && d.builtin_documents == "books") {
    error("data.builtin_documents", "books are in the byte form only (data.builtin_form: bytes)");
  }
  if (d.eval_min_doc_tokens < 0) {
    error("data.eval_min_doc_tokens", "must be >= 0 (0: no filter), got " + std::to_string(d.eval_min_doc_tokens));
  }
  CheckAtMost("data.eval_min_doc_tokens", "eval_min_doc_tokens", d.eval_min_doc_tokens, kMaxSequenceLength, errors);
  if (d.eval_min_doc_tokens > 0) {
    if (d.synthetic()) error("data.eval_min_doc_tokens", "synthetic task '" + d.source + "' has no documents");
    if (d.source == "shards" && d.eot_token < 0) {
      error("data.eot_token", "source 'shards' with eval_min_doc_tokens needs the token between documents");
    }
    if ((d.source == "builtin" || d.source == "text") && d.doc_separator.size() != 1) {
      error("data.doc_separator", "must be one byte when eval_min_doc_tokens is set (a document starts at it)");
    }
  }
  if (d.cross_doc_keys != "document" && d.cross_doc_keys != "window") {
    error("data.cross_doc_keys", "must be document or window");
  }
  if (d.cross_doc_mask) {
    if (d.synthetic()) error("data.cross_doc_mask", "synthetic task '" + d.source + "' has no documents");
    if ((d.source == "builtin" || d.source == "text") && d.doc_separator.size() != 1) {
      error("data.doc_separator", "must be one byte when cross_doc_mask is on (a document starts at it)");
    }
    if (d.source == "shards" && d.eot_token < 0) {
      error("data.eot_token", "source 'shards' with cross_doc_mask needs the token between documents");
    }
  }
  if (d.source == "nrw") {
    if (d.nrw.window_width <= 0) error("data.nrw.window_width", "must be positive");
    if (d.nrw.window_centre <= 0) error("data.nrw.window_centre", "must be positive");
    const std::optional<int64_t> window_end = CheckedAdd(d.nrw.window_centre, d.nrw.window_width / 2);
    if (!window_end || *window_end > d.seq_len - 2) {
      error("data.nrw.window_centre",
            "window (centre + width/2 = " + (window_end ? std::to_string(*window_end) : std::string("over int64")) +
                ") must fit inside seq_len - 2 = " + std::to_string(d.seq_len - 2));
    }
    if (!(d.nrw.buffer >= 0.0 && d.nrw.buffer <= kMaxNrwBuffer)) {
      error("data.nrw.buffer", "must lie in [0, " + std::to_string(static_cast<int>(kMaxNrwBuffer)) + "]");
    } else if (window_end && *window_end <= d.seq_len - 2) {
      // NO needs a distance beyond (1 + r) W/2 on one side of the centre, inside 1..seq_len - 1.
      const double no_edge = (1.0 + d.nrw.buffer) * static_cast<double>(d.nrw.window_width) / 2.0;
      const double centre = static_cast<double>(d.nrw.window_centre);
      if (centre - no_edge <= 1.0 && centre + no_edge >= static_cast<double>(d.seq_len - 1)) {
        error("data.nrw.buffer", "leaves no NO distance: (1 + r) W/2 = " + std::to_string(no_edge) +
                                     " reaches past both ends of the distances 1.." + std::to_string(d.seq_len - 1) +
                                     " around the centre " + std::to_string(d.nrw.window_centre));
      }
    }
  }
  if (d.source == "niah") {
    if (d.niah.max_distractors < 0) error("data.niah.max_distractors", "must be >= 0");
    if (d.niah.key_symbols < 2 || d.niah.value_symbols < 2 || d.niah.filler_symbols < 1) {
      error("data.niah", "needs at least 2 key symbols, 2 value symbols and 1 filler symbol");
    }
    CheckAtMost("data.niah.key_symbols", "key_symbols", d.niah.key_symbols, kMaxVocabSize, errors);
    CheckAtMost("data.niah.value_symbols", "value_symbols", d.niah.value_symbols, kMaxVocabSize, errors);
    CheckAtMost("data.niah.filler_symbols", "filler_symbols", d.niah.filler_symbols, kMaxVocabSize, errors);
    if (d.niah.key_symbols <= d.niah.max_distractors) {
      error("data.niah.key_symbols", "must exceed max_distractors so that keys are distinct");
    }
    const std::optional<int64_t> pairs = CheckedAdd(d.niah.max_distractors, 1);
    const std::optional<int64_t> needed = (4 * CheckedInt64(pairs.value_or(-1)) + 3).value();
    if (!pairs || !needed || *needed > d.seq_len) {
      error("data.seq_len", "too short for " + (pairs ? std::to_string(*pairs) : std::string("max_distractors + 1")) +
                                " key-value pairs");
    }
  }
  if (d.source == "position_index" && d.position_index.symbols < 2) {
    error("data.position_index.symbols", "must be >= 2");
  }
  if (d.source == "position_index") {
    CheckAtMost("data.position_index.symbols", "symbols", d.position_index.symbols, kMaxVocabSize, errors);
  }
}

}  // namespace rung
