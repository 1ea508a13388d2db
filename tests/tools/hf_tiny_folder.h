// tests/tools/hf_tiny_folder.h
//
// The small real Hugging Face tokenizer.json of tests/cli/fixture/hf-tiny (SentencePiece-style BPE,
// 40 ids: <unk> 0, <s> 1, </s> 2, "▁" 3, a..z 4..29, then merges; its template puts <s> before each
// sequence), and model folders built from it in a test's temporary folder.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tests/core/data/test_files.h"

namespace rung::data_tool::hf_tiny {

inline std::string HfTinyPath(const std::string& name) {
  return std::string(RUNG_SOURCE_DIR) + "/tests/cli/fixture/hf-tiny/" + name;
}

inline std::string HfTinyJson() { return data_test::ReadBytes(HfTinyPath("tokenizer.json")); }

// hf-tiny's tokenizer_config.json: add_bos_token, bos_token <s>, eos_token </s>.
inline std::string HfTinyConfig() { return data_test::ReadBytes(HfTinyPath("tokenizer_config.json")); }

// Writes `folder`/tokenizer.json (hf-tiny's, or `tokenizer_json` where given) and, where not empty,
// `folder`/tokenizer_config.json and `folder`/generation_config.json.
inline void WriteHfFolder(const std::string& folder, const std::string& tokenizer_config,
                          const std::string& generation_config = "", const std::string& tokenizer_json = "") {
  data_test::WriteBytes(folder + "/tokenizer.json", tokenizer_json.empty() ? HfTinyJson() : tokenizer_json);
  if (!tokenizer_config.empty()) data_test::WriteBytes(folder + "/tokenizer_config.json", tokenizer_config);
  if (!generation_config.empty()) data_test::WriteBytes(folder + "/generation_config.json", generation_config);
}

// hf-tiny's tokenizer.json edited by `edit` (on its parsed JSON), as text.
template <typename Edit>
std::string EditedHfTinyJson(Edit edit) {
  nlohmann::json tokenizer = nlohmann::json::parse(HfTinyJson());
  edit(tokenizer);
  return tokenizer.dump(1);
}

}  // namespace rung::data_tool::hf_tiny
