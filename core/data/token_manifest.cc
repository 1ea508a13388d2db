#include "core/data/token_manifest.h"

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rung {
namespace {

using json = nlohmann::json;

class ManifestReader {
 public:
  ManifestReader(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  Status Error(const std::string& field, const std::string& message) const {
    return Status::DataLoss("token manifest " + path_ + ": " + field + ": " + message);
  }

  Status String(const json& object, const std::string& field, const std::string& key, std::string* out,
                bool optional = false) const {
    auto it = object.find(key);
    if (it == object.end()) return optional ? Status::Ok() : Error(field, "missing");
    if (!it->is_string()) return Error(field, "must be a string");
    *out = it->get<std::string>();
    return Status::Ok();
  }

  Status Int(const json& object, const std::string& field, const std::string& key, int64_t* out, int64_t low,
             int64_t high) const {
    auto it = object.find(key);
    if (it == object.end()) return Error(field, "missing");
    if (!it->is_number_integer()) return Error(field, "must be an integer");
    const bool is_unsigned = it->is_number_unsigned();
    if (is_unsigned && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return Error(field, "out of range");
    const int64_t value = it->get<int64_t>();
    if (value < low || value > high) {
      return Error(field, std::to_string(value) + " outside [" + std::to_string(low) + ", " + std::to_string(high) + "]");
    }
    *out = value;
    return Status::Ok();
  }

  const json& object() const { return object_; }

 private:
  const json& object_;
  std::string path_;
};

bool PlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

bool IsSha256Hex(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

json TokenManifest::ToJson() const {
  json source_list = json::array();
  for (const ManifestSource& source : sources) {
    source_list.push_back({{"path", source.path}, {"bytes", source.bytes}, {"sha256", source.sha256}});
  }
  json shard_list = json::array();
  for (const ManifestShard& shard : shards) {
    shard_list.push_back({{"file", shard.file},
                          {"split", shard.split},
                          {"documents", shard.documents},
                          {"tokens", shard.tokens},
                          {"bytes", shard.bytes},
                          {"sha256", shard.sha256}});
  }
  json out = {{"format", kTokenManifestFormat},
          {"version", 1},
          {"tokenizer",
           {{"file", tokenizer_file}, {"sha256", tokenizer_sha256}, {"type", tokenizer_type}, {"vocab_size", vocab_size}}},
          {"sources", source_list},
          {"eot_id", eot_id},
          {"vocab_size", vocab_size},
          {"token_bytes", token_bytes},
          {"val_fraction", val_fraction},
          {"seed", seed},
          {"shard_tokens", shard_tokens},
          {"split_on", split_on},
          {"text_field", text_field},
          {"max_document_bytes", max_document_bytes},
          {"documents_split", documents_split},
          {"shards", shard_list},
          {"token_byte_lengths", token_byte_lengths}};
  if (bos_id >= 0) out["bos_id"] = bos_id;
  return out;
}

StatusOr<TokenManifest> ParseTokenManifest(std::string_view text, const std::string& path) {
  const json document = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    return Status::DataLoss("token manifest " + path + ": not a JSON object");
  }
  ManifestReader reader(document, path);
  TokenManifest manifest;
  std::string format;
  RUNG_RETURN_IF_ERROR(reader.String(document, "format", "format", &format));
  if (format != kTokenManifestFormat) {
    return reader.Error("format", "'" + format + "' is not " + std::string(kTokenManifestFormat));
  }
  int64_t version = 0;
  RUNG_RETURN_IF_ERROR(reader.Int(document, "version", "version", &version, 1, 1));
  RUNG_RETURN_IF_ERROR(reader.Int(document, "vocab_size", "vocab_size", &manifest.vocab_size, 1, INT32_MAX));
  RUNG_RETURN_IF_ERROR(reader.Int(document, "token_bytes", "token_bytes", &manifest.token_bytes, 2, 4));
  if (manifest.token_bytes == 3) return reader.Error("token_bytes", "must be 2 or 4");
  if (manifest.token_bytes == 2 && manifest.vocab_size > 65536) {
    return reader.Error("token_bytes", "2 bytes cannot hold a vocabulary of " + std::to_string(manifest.vocab_size));
  }
  RUNG_RETURN_IF_ERROR(reader.Int(document, "eot_id", "eot_id", &manifest.eot_id, 0, manifest.vocab_size - 1));
  if (document.contains("bos_id")) {
    RUNG_RETURN_IF_ERROR(reader.Int(document, "bos_id", "bos_id", &manifest.bos_id, 0, manifest.vocab_size - 1));
  }
  auto tokenizer = document.find("tokenizer");
  if (tokenizer == document.end() || !tokenizer->is_object()) return reader.Error("tokenizer", "must be an object");
  RUNG_RETURN_IF_ERROR(reader.String(*tokenizer, "tokenizer.file", "file", &manifest.tokenizer_file));
  RUNG_RETURN_IF_ERROR(reader.String(*tokenizer, "tokenizer.sha256", "sha256", &manifest.tokenizer_sha256));
  RUNG_RETURN_IF_ERROR(reader.String(*tokenizer, "tokenizer.type", "type", &manifest.tokenizer_type, true));
  RUNG_RETURN_IF_ERROR(reader.String(document, "split_on", "split_on", &manifest.split_on, true));
  RUNG_RETURN_IF_ERROR(reader.String(document, "text_field", "text_field", &manifest.text_field, true));
  if (auto it = document.find("val_fraction"); it != document.end()) {
    if (!it->is_number()) return reader.Error("val_fraction", "must be a number");
    manifest.val_fraction = it->get<double>();
  }
  if (auto it = document.find("seed"); it != document.end()) {
    if (!it->is_number_unsigned()) return reader.Error("seed", "must be a non-negative integer");
    manifest.seed = it->get<uint64_t>();
  }
  if (document.contains("shard_tokens")) {
    RUNG_RETURN_IF_ERROR(reader.Int(document, "shard_tokens", "shard_tokens", &manifest.shard_tokens, 0, INT32_MAX));
  }
  if (document.contains("max_document_bytes")) {
    RUNG_RETURN_IF_ERROR(
        reader.Int(document, "max_document_bytes", "max_document_bytes", &manifest.max_document_bytes, 0, INT64_MAX));
  }
  if (document.contains("documents_split")) {
    RUNG_RETURN_IF_ERROR(
        reader.Int(document, "documents_split", "documents_split", &manifest.documents_split, 0, INT64_MAX));
  }
  if (auto sources = document.find("sources"); sources != document.end()) {
    if (!sources->is_array()) return reader.Error("sources", "must be an array");
    for (size_t i = 0; i < sources->size(); ++i) {
      const json& entry = (*sources)[i];
      const std::string field = "sources[" + std::to_string(i) + "]";
      if (!entry.is_object()) return reader.Error(field, "must be an object");
      ManifestSource source;
      RUNG_RETURN_IF_ERROR(reader.String(entry, field + ".path", "path", &source.path));
      RUNG_RETURN_IF_ERROR(reader.String(entry, field + ".sha256", "sha256", &source.sha256));
      RUNG_RETURN_IF_ERROR(reader.Int(entry, field + ".bytes", "bytes", &source.bytes, 0, INT64_MAX));
      manifest.sources.push_back(std::move(source));
    }
  }
  auto shards = document.find("shards");
  if (shards == document.end() || !shards->is_array()) return reader.Error("shards", "must be an array");
  for (size_t i = 0; i < shards->size(); ++i) {
    const json& entry = (*shards)[i];
    const std::string field = "shards[" + std::to_string(i) + "]";
    if (!entry.is_object()) return reader.Error(field, "must be an object");
    ManifestShard shard;
    RUNG_RETURN_IF_ERROR(reader.String(entry, field + ".file", "file", &shard.file));
    if (!PlainFileName(shard.file)) {
      return reader.Error(field + ".file", "'" + shard.file + "' is not a plain file name in the manifest's folder");
    }
    RUNG_RETURN_IF_ERROR(reader.String(entry, field + ".split", "split", &shard.split));
    if (shard.split != "train" && shard.split != "val") return reader.Error(field + ".split", "must be train or val");
    RUNG_RETURN_IF_ERROR(reader.Int(entry, field + ".documents", "documents", &shard.documents, 0, INT64_MAX));
    RUNG_RETURN_IF_ERROR(reader.Int(entry, field + ".tokens", "tokens", &shard.tokens, 0, INT32_MAX));
    RUNG_RETURN_IF_ERROR(reader.Int(entry, field + ".bytes", "bytes", &shard.bytes, 0, INT64_MAX));
    RUNG_RETURN_IF_ERROR(reader.String(entry, field + ".sha256", "sha256", &shard.sha256));
    if (!IsSha256Hex(shard.sha256)) {
      return reader.Error(field + ".sha256",
                          "'" + shard.sha256.substr(0, 80) + "' is not a SHA-256 (64 lowercase hex digits)");
    }
    manifest.shards.push_back(std::move(shard));
  }
  auto lengths = document.find("token_byte_lengths");
  if (lengths == document.end() || !lengths->is_array()) return reader.Error("token_byte_lengths", "must be an array");
  if (static_cast<int64_t>(lengths->size()) != manifest.vocab_size) {
    return reader.Error("token_byte_lengths", "has " + std::to_string(lengths->size()) + " entries, not one per id (" +
                                                  std::to_string(manifest.vocab_size) + ")");
  }
  manifest.token_byte_lengths.reserve(lengths->size());
  for (size_t id = 0; id < lengths->size(); ++id) {
    const json& length = (*lengths)[id];
    if (!length.is_number_integer() || length.get<int64_t>() < 0 || length.get<int64_t>() > 1024) {
      return reader.Error("token_byte_lengths[" + std::to_string(id) + "]", "must be an integer in [0, 1024]");
    }
    manifest.token_byte_lengths.push_back(static_cast<int32_t>(length.get<int64_t>()));
  }
  return manifest;
}

StatusOr<TokenManifest> ReadTokenManifest(const std::string& folder) {
  const std::string path = (std::filesystem::path(folder) / kTokenManifestFile).string();
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("token manifest " + path + " cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::DataLoss("token manifest " + path + ": read error");
  return ParseTokenManifest(text.str(), path);
}

bool HasTokenManifest(const std::string& folder) {
  std::error_code error;
  return std::filesystem::is_regular_file(std::filesystem::path(folder) / kTokenManifestFile, error);
}

}  // namespace rung
