#include "core/hf/bos_policy.h"

#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"
#include "core/hf/tokenizer_json.h"

namespace rung::hf {

bool FolderAddsBos(const std::string& folder, int64_t bos) {
  std::string text;
  if (ReadFileBytes(folder + "/tokenizer_config.json", "tokenizer_config.json", &text).ok()) {
    const nlohmann::json config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (config.is_object() && config.contains("add_bos_token") && config.at("add_bos_token").is_boolean()) {
      return config.at("add_bos_token").get<bool>();
    }
  }
  if (!ReadFileBytes(folder + "/tokenizer.json", "tokenizer.json", &text).ok()) return false;
  const StatusOr<TokenizerJson> tokenizer = ParseTokenizerJson(text, folder + "/tokenizer.json");
  return tokenizer.ok() && !tokenizer->prefix_ids.empty() && tokenizer->prefix_ids.front() == bos;
}

}  // namespace rung::hf
