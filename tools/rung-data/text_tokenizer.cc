#include "tools/rung-data/text_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"
#include "core/hf/bos_policy.h"
#include "core/hf/hf_tokenizer.h"
#include "core/hf/json_keys.h"
#include "tools/rung-data/tokenizer.h"
#include "tools/rung-data/word_cached_encoder.h"

namespace rung::data_tool {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kHfFile = "tokenizer.json";
constexpr std::string_view kSentencePieceFile = "tokenizer.model";

// A JSON file of the model folder, or null where it is absent. INVALID_ARGUMENT naming it and the
// byte where it stops being JSON.
StatusOr<json> ReadOptionalJson(const fs::path& path) {
  std::error_code error;
  if (!fs::exists(path, error)) return json();
  std::string text;
  RUNG_RETURN_IF_ERROR(ReadFileBytes(path.string(), "file", &text));
  RUNG_ASSIGN_OR_RETURN(json parsed, hf::ParseJson(text, path.string()));
  if (!parsed.is_object()) return Status::InvalidArgument(path.string() + ": not a JSON object");
  return parsed;
}

// A token named by tokenizer_config.json: a string, {"content": ...} (an AddedToken), or null.
StatusOr<std::optional<std::string>> ConfigToken(const json& config, const std::string& key, const std::string& file) {
  if (!config.is_object() || !config.contains(key) || config.at(key).is_null()) return std::optional<std::string>();
  const json& value = config.at(key);
  if (value.is_string()) return std::optional<std::string>(value.get<std::string>());
  if (value.is_object() && value.contains("content") && value.at("content").is_string()) {
    return std::optional<std::string>(value.at("content").get<std::string>());
  }
  return Status::InvalidArgument(file + ": key '" + key + "': " + value.dump() + " is not a token");
}

// generation_config.json's id for `key`: an integer, or the first of a list.
StatusOr<std::optional<int64_t>> ConfigId(const json& config, const std::string& key, const std::string& file) {
  if (!config.is_object() || !config.contains(key) || config.at(key).is_null()) return std::optional<int64_t>();
  const json& value = config.at(key);
  const json& first = value.is_array() && !value.empty() ? value.at(0) : value;
  if (!first.is_number_integer() || first.get<int64_t>() < 0) {
    return Status::InvalidArgument(file + ": key '" + key + "': " + value.dump() + " is not a token id");
  }
  return std::optional<int64_t>(first.get<int64_t>());
}

// A model folder's tokenizer_config.json and generation_config.json (null where absent), read once.
struct FolderConfigs {
  std::string tokenizer_config_file, generation_config_file;
  json tokenizer_config, generation_config;

  static StatusOr<FolderConfigs> Read(const fs::path& folder) {
    FolderConfigs out;
    out.tokenizer_config_file = (folder / "tokenizer_config.json").string();
    out.generation_config_file = (folder / "generation_config.json").string();
    RUNG_ASSIGN_OR_RETURN(out.tokenizer_config, ReadOptionalJson(out.tokenizer_config_file));
    RUNG_ASSIGN_OR_RETURN(out.generation_config, ReadOptionalJson(out.generation_config_file));
    return out;
  }

  // Where a special token comes from, and its id: `override_token` (--eot), tokenizer_config.json's
  // `token_key`, generation_config.json's `id_key`, else none. `lookup` finds a token's id in the
  // tokenizer read from `tokenizer_file`; *name is the token, or "id N".
  template <typename Lookup>
  StatusOr<std::optional<int64_t>> Token(const std::string& override_token, const std::string& token_key,
                                         const std::string& id_key, int64_t vocab_size,
                                         const std::string& tokenizer_file, Lookup lookup, std::string* name) const {
    std::optional<std::string> token;
    std::string where;
    if (!override_token.empty()) {
      token = override_token;
      where = "--eot";
    } else {
      RUNG_ASSIGN_OR_RETURN(token, ConfigToken(tokenizer_config, token_key, tokenizer_config_file));
      where = tokenizer_config_file + " key '" + token_key + "'";
    }
    if (token) {
      const std::optional<int64_t> id = lookup(*token);
      if (!id) {
        return Status::InvalidArgument(where + ": token " + json(*token).dump() + " is not in " + tokenizer_file +
                                       "'s vocabulary");
      }
      *name = *token;
      return id;
    }
    RUNG_ASSIGN_OR_RETURN(const std::optional<int64_t> id, ConfigId(generation_config, id_key, generation_config_file));
    if (id && *id >= vocab_size) {
      return Status::InvalidArgument(generation_config_file + ": key '" + id_key + "': " + std::to_string(*id) +
                                     " is outside the tokenizer's " + std::to_string(vocab_size) + " ids");
    }
    if (id) *name = "id " + std::to_string(*id);
    return id;
  }
};

std::vector<int> Ints(const std::vector<int64_t>& ids) { return std::vector<int>(ids.begin(), ids.end()); }

class HfDocumentEncoder : public DocumentEncoder {
 public:
  explicit HfDocumentEncoder(const hf::HfTokenizer& tokenizer) : tokenizer_(tokenizer), session_(tokenizer.NewSession()) {}
  Status Encode(std::string_view text, bool continues, std::vector<int>* ids) override {
    return tokenizer_.Encode(text, /*add_special_tokens=*/false, *session_, ids, continues);
  }

 private:
  const hf::HfTokenizer& tokenizer_;
  std::unique_ptr<hf::HfTokenizer::Session> session_;
};

class HfTextTokenizer : public TextTokenizer {
 public:
  HfTextTokenizer(std::unique_ptr<hf::HfTokenizer> tokenizer, std::vector<int> prefix)
      : tokenizer_(std::move(tokenizer)), prefix_(std::move(prefix)) {}
  int64_t vocab_size() const override { return tokenizer_->vocab_size(); }
  std::vector<int32_t> TokenByteLengths() const override { return tokenizer_->TokenByteLengths(); }
  std::unique_ptr<DocumentEncoder> NewEncoder() const override { return std::make_unique<HfDocumentEncoder>(*tokenizer_); }
  std::vector<int> PrefixIds() const override { return prefix_; }
  std::vector<int> SuffixIds() const override { return Ints(tokenizer_->definition().suffix_ids); }

 private:
  std::unique_ptr<hf::HfTokenizer> tokenizer_;
  std::vector<int> prefix_;
};

class SentencePieceDocumentEncoder : public DocumentEncoder {
 public:
  explicit SentencePieceDocumentEncoder(const Tokenizer& tokenizer) : encoder_(tokenizer) {}
  Status Encode(std::string_view text, bool /*continues*/, std::vector<int>* ids) override {
    return encoder_.Encode(text, ids);
  }

 private:
  WordCachedEncoder encoder_;
};

class SentencePieceTextTokenizer : public TextTokenizer {
 public:
  SentencePieceTextTokenizer(std::unique_ptr<Tokenizer> tokenizer, std::optional<int64_t> added_bos)
      : tokenizer_(std::move(tokenizer)), added_bos_(added_bos) {}
  int64_t vocab_size() const override { return tokenizer_->vocab_size(); }
  std::vector<int32_t> TokenByteLengths() const override { return tokenizer_->TokenByteLengths(); }
  std::unique_ptr<DocumentEncoder> NewEncoder() const override {
    return std::make_unique<SentencePieceDocumentEncoder>(*tokenizer_);
  }
  std::vector<int> PrefixIds() const override {
    return added_bos_ ? std::vector<int>{static_cast<int>(*added_bos_)} : std::vector<int>();
  }
  std::vector<int> SuffixIds() const override { return {}; }

 private:
  std::unique_ptr<Tokenizer> tokenizer_;
  std::optional<int64_t> added_bos_;
};

// False only where `bytes` are JSON but not a Hugging Face tokenizer.json (a JSON object with a
// "model"): rung-data's description of its own tokenizer.model, which shares the name. Bytes that are
// not JSON at all are read as a tokenizer.json, whose reader says at which byte they stop being JSON.
bool IsHfTokenizerJson(const std::string& bytes) {
  const json parsed = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() || (parsed.is_object() && parsed.contains("model"));
}

}  // namespace

StatusOr<LoadedTokenizer> LoadTextTokenizer(const std::string& path, const std::string& eot) {
  std::error_code error;
  if (!fs::exists(path, error)) return Status::NotFound("cannot open tokenizer " + path + ": it does not exist");
  LoadedTokenizer loaded;
  bool hf_json = false;
  if (fs::is_directory(path, error)) {
    const fs::path json_path = fs::path(path) / kHfFile, model_path = fs::path(path) / kSentencePieceFile;
    std::string bytes;
    const bool has_json = fs::exists(json_path, error);
    if (has_json) RUNG_RETURN_IF_ERROR(ReadFileBytes(json_path.string(), "tokenizer", &bytes));
    if (has_json && IsHfTokenizerJson(bytes)) {
      loaded.path = json_path.string();
      loaded.bytes = std::move(bytes);
      hf_json = true;
    } else if (fs::exists(model_path, error)) {
      loaded.path = model_path.string();
    } else {
      return Status::NotFound("tokenizer folder " + path + " holds neither a Hugging Face tokenizer.json nor a "
                              "tokenizer.model");
    }
  } else {
    loaded.path = path;
  }
  if (loaded.bytes.empty()) RUNG_RETURN_IF_ERROR(ReadFileBytes(loaded.path, "tokenizer", &loaded.bytes));
  if (!hf_json && fs::path(loaded.path).extension() == ".json") {
    if (!IsHfTokenizerJson(loaded.bytes)) {
      return Status::DataLoss("tokenizer " + loaded.path + " is JSON but not a Hugging Face tokenizer.json (it has no "
                              "'model'); for a tokenizer rung-data trained, give its tokenizer.model");
    }
    hf_json = true;
  }
  RUNG_ASSIGN_OR_RETURN(const FolderConfigs configs, FolderConfigs::Read(fs::path(loaded.path).parent_path()));
  std::string bos_name;

  if (hf_json) {
    StatusOr<std::unique_ptr<hf::HfTokenizer>> read = hf::HfTokenizer::FromJson(loaded.bytes, loaded.path);
    if (!read.ok() && json::parse(loaded.bytes, nullptr, /*allow_exceptions=*/false).is_discarded()) {
      return Status::DataLoss(read.status().message());  // a damaged file: unusable input, as a model's
    }
    RUNG_ASSIGN_OR_RETURN(std::unique_ptr<hf::HfTokenizer> tokenizer, std::move(read));
    const hf::HfTokenizer& hf_tokenizer = *tokenizer;
    auto lookup = [&](const std::string& token) { return hf_tokenizer.TokenId(token); };
    loaded.file_name = std::string(kHfFile);
    loaded.type = hf_tokenizer.definition().family == hf::TokenizerFamily::kByteLevelBpe ? "byte-level-bpe"
                                                                                          : "sentencepiece-bpe";
    RUNG_ASSIGN_OR_RETURN(loaded.eot_id, configs.Token(eot, "eos_token", "eos_token_id", hf_tokenizer.vocab_size(),
                                                       loaded.path, lookup, &loaded.eot_token));
    RUNG_ASSIGN_OR_RETURN(loaded.bos_id, configs.Token("", "bos_token", "bos_token_id", hf_tokenizer.vocab_size(),
                                                       loaded.path, lookup, &bos_name));
    std::vector<int> prefix = Ints(hf_tokenizer.definition().prefix_ids);
    // Where no config names a BOS, the template's first token is the one each document starts with.
    if (!loaded.bos_id && !prefix.empty()) loaded.bos_id = prefix.front();
    if (loaded.bos_id) {
      // One rule with rung eval's (hf/bos_policy.h): tokenizer_config.json's add_bos_token where it
      // says, as transformers rebuilds the template from it; else the template.
      const auto bos = static_cast<int>(*loaded.bos_id);
      const bool starts_with_bos = !prefix.empty() && prefix.front() == bos;
      loaded.bos_added = hf::AddsBos(configs.tokenizer_config, hf_tokenizer.definition().prefix_ids, *loaded.bos_id);
      if (loaded.bos_added && !starts_with_bos) prefix.insert(prefix.begin(), bos);
      if (!loaded.bos_added && starts_with_bos) prefix.erase(prefix.begin());
    }
    loaded.tokenizer = std::make_unique<HfTextTokenizer>(std::move(tokenizer), std::move(prefix));
    return loaded;
  }

  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tokenizer, Tokenizer::Load(loaded.path));
  const Tokenizer& model = *tokenizer;
  auto lookup = [&](const std::string& token) { return model.PieceId(token); };
  loaded.file_name = std::string(kSentencePieceFile);
  // rung-data's own tokenizer folder describes its model in a tokenizer.json beside it.
  if (std::string about; ReadFileBytes(fs::path(loaded.path).replace_extension(".json").string(), "", &about).ok()) {
    const json description = json::parse(about, nullptr, /*allow_exceptions=*/false);
    if (description.is_object() && description.contains("type") && description["type"].is_string()) {
      loaded.type = description["type"].get<std::string>();
    }
  }
  RUNG_ASSIGN_OR_RETURN(const std::optional<int64_t> eot_id, configs.Token(eot, "eos_token", "eos_token_id",
                                                                            model.vocab_size(), loaded.path, lookup,
                                                                            &loaded.eot_token));
  loaded.eot_id = eot_id ? *eot_id : model.eot_id();
  if (!eot_id) loaded.eot_token = "</s>";
  RUNG_ASSIGN_OR_RETURN(loaded.bos_id, configs.Token("", "bos_token", "bos_token_id", model.vocab_size(), loaded.path,
                                                     lookup, &bos_name));
  // The same rule as a tokenizer.json's, with no template: a SentencePiece model adds its BOS only
  // where add_bos_token says so.
  loaded.bos_added = loaded.bos_id && hf::AddsBos(configs.tokenizer_config, {}, *loaded.bos_id);
  loaded.tokenizer = std::make_unique<SentencePieceTextTokenizer>(std::move(tokenizer),
                                                                  loaded.bos_added ? loaded.bos_id : std::nullopt);
  return loaded;
}

StatusOr<int64_t> RequireEot(const LoadedTokenizer& loaded) {
  if (loaded.eot_id) return *loaded.eot_id;
  const fs::path folder = fs::path(loaded.path).parent_path();
  return Status::InvalidArgument("tokenizer " + loaded.path + ": no end-of-text token to write between documents: " +
                                 (folder / "tokenizer_config.json").string() + " (eos_token) and " +
                                 (folder / "generation_config.json").string() +
                                 " (eos_token_id) name none; give one with --eot TOKEN (e.g. --eot '<|endoftext|>')");
}

}  // namespace rung::data_tool
