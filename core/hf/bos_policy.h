// core/hf/bos_policy.h
//
// Whether a Hugging Face model folder's tokenizer puts its BOS before each text, as transformers'
// tokenizers do: tokenizer_config.json's add_bos_token where it says (Llama 2, SmolLM), else the
// template of tokenizer.json's post-processor starting with that BOS (Llama 3 says so there alone).
// An absent or unreadable file says nothing; a folder where neither says so adds none.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rung::hf {

// The rule on what is already read: tokenizer_config.json's object (null where absent) and the
// template's prefix ids.
bool AddsBos(const nlohmann::json& tokenizer_config, const std::vector<int64_t>& template_prefix, int64_t bos);

// The rule on a folder's files.
bool FolderAddsBos(const std::string& folder, int64_t bos);

}  // namespace rung::hf
