#include "core/hf/bos_policy.h"

#include "core/common/file_bytes.h"
#include "core/hf/tokenizer_json.h"

namespace rung::hf {

bool AddsBos(const nlohmann::json& tokenizer_config, const std::vector<int64_t>& template_prefix, int64_t bos) {
  if (tokenizer_config.is_object() && tokenizer_config.contains("add_bos_token") &&
      tokenizer_config.at("add_bos_token").is_boolean()) {
    return tokenizer_config.at("add_bos_token").get<bool>();
  }
  return !template_prefix.empty() && template_prefix.front() == bos;
}

bool FolderAddsBos(const std::string& folder, int64_t bos) {
  std::string text;
  nlohmann::json config;
  if (ReadFileBytes(folder + "/tokenizer_config.json", "tokenizer_config.json", &text).ok()) {
    config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  }
  std::vector<int64_t> prefix;
  if (ReadFileBytes(folder + "/tokenizer.json", "tokenizer.json", &text).ok()) {
    const StatusOr<TokenizerJson> tokenizer = ParseTokenizerJson(text, folder + "/tokenizer.json");
    if (tokenizer.ok()) prefix = tokenizer->prefix_ids;
  }
  return AddsBos(config, prefix, bos);
}

}  // namespace rung::hf
