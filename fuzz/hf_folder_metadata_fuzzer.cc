// fuzz/hf_folder_metadata_fuzzer.cc: the JSON files of a Hugging Face model folder as rung reads them,
// model.safetensors.index.json (core/hf/hf_weights.h ParseWeightIndex), config.json
// (core/hf/hf_model_config.h ParseHfModelConfig) and tokenizer.json (core/hf/tokenizer_json.h). Whatever the bytes, each returns a status; an index it
// accepts maps at least one tensor to plain file names only; a config it accepts has positive shapes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/hf/hf_model_config.h"
#include "core/hf/hf_weights.h"
#include "core/hf/tokenizer_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto index = rung::hf::ParseWeightIndex(text, "fuzz/model.safetensors.index.json");
  if (index.ok()) {
    if (index->empty()) std::abort();
    for (const auto& [name, file] : *index) {
      if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..") std::abort();
    }
  }
  auto config = rung::hf::ParseHfModelConfig(text, "fuzz/config.json");
  if (config.ok() && (config->hidden_size <= 0 || config->num_hidden_layers <= 0 || config->vocab_size <= 0 ||
                      config->num_attention_heads <= 0 || config->num_key_value_heads <= 0 || config->head_dim <= 0)) {
    std::abort();
  }
  // An accepted tokenizer's merges and template tokens are all in its vocabulary.
  auto tokenizer = rung::hf::ParseTokenizerJson(text, "fuzz/tokenizer.json");
  if (tokenizer.ok()) {
    for (const auto& [left, right] : tokenizer->merges) {
      if (!tokenizer->vocab.count(left) || !tokenizer->vocab.count(right) || !tokenizer->vocab.count(left + right)) {
        std::abort();
      }
    }
  }
  return 0;
}
