// tools/rung-data/text_tokenizer.h
//
// The tokenizer rung-data encodes documents with, loaded from what a user has: a SentencePiece model
// (`tokenizer.model`: rung-data's own, or a model folder's such as Llama 2's) or a Hugging Face
// `tokenizer.json` of the BPE families (core/hf/hf_tokenizer.h: GPT-2, Llama 3, Qwen2/3, SmolLM,
// Llama 2 and Mistral conversions), or a model folder holding either (tokenizer.json first).
//
// Its special tokens are the model folder's:
//   end-of-text (written between documents): --eot TOKEN where given, else tokenizer_config.json's
//     eos_token, else generation_config.json's eos_token_id (the first of a list), else a SentencePiece
//     model's </s>; a tokenizer.json may have none (RequireEot says what to give);
//   BOS: tokenizer_config.json's bos_token, else generation_config.json's bos_token_id, else a
//     tokenizer.json template's first token; recorded, and written at the start of each document
//     where the tokenizer adds it: tokenizer_config.json's add_bos_token where it says (transformers
//     rebuilds a template from it), else a tokenizer.json's post-processor template (hf/bos_policy.h,
//     the rule rung eval follows too); a SentencePiece model adds none without add_bos_token.
// Added tokens marked special are never read from document text (hf_tokenizer.h).
//
// Thread safety: a loaded tokenizer is shared; each thread encodes with its own DocumentEncoder.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace rung::data_tool {

// Encodes documents for one thread.
class DocumentEncoder {
 public:
  virtual ~DocumentEncoder() = default;
  // Replaces *ids with the ids of `text` alone (no template tokens). `continues`: the text is the next
  // piece of a document encoded in pieces, so a Hugging Face tokenizer prepends no start-of-text mark
  // to it (a SentencePiece model encodes every piece as a text of its own). INTERNAL where the
  // tokenizer library fails.
  virtual Status Encode(std::string_view text, bool continues, std::vector<int>* ids) = 0;
};

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;
  virtual int64_t vocab_size() const = 0;
  // Each id's length in bytes when decoded (special tokens 0), for bits per byte.
  virtual std::vector<int32_t> TokenByteLengths() const = 0;
  virtual std::unique_ptr<DocumentEncoder> NewEncoder() const = 0;
  // The template tokens the tokenizer puts before and after each document's ids (its special tokens,
  // such as BOS), as Hugging Face's add_special_tokens=True adds them.
  virtual std::vector<int> PrefixIds() const = 0;
  virtual std::vector<int> SuffixIds() const = 0;
};

struct LoadedTokenizer {
  std::unique_ptr<TextTokenizer> tokenizer;
  std::string path;       // the file read
  std::string file_name;  // "tokenizer.model" or "tokenizer.json": the name a prepared folder copies it under
  std::string bytes;      // its content
  std::string type;       // the manifest's tokenizer.type: bpe | unigram (SentencePiece), byte-level-bpe,
                          // sentencepiece-bpe (tokenizer.json); "" where a SentencePiece model's is unknown
  std::optional<int64_t> eot_id;  // none: a tokenizer.json whose folder names no end-of-text token
  std::string eot_token;
  std::optional<int64_t> bos_id;  // the model folder's BOS, where its configs name one
  bool bos_added = false;         // each document's encoding starts with it (special tokens on)
};

// Loads `path` (a file or a model folder, see the header). `eot` (may be empty) names the end-of-text
// token. Errors: NOT_FOUND for a path that does not exist or a folder with neither file; DATA_LOSS for a
// file that is neither tokenizer (naming it), a tokenizer.json that is not JSON (a file, or a folder's
// tokenizer.json: the byte where it stops being JSON) or a SentencePiece model without </s> where
// nothing else names an end-of-text token; INVALID_ARGUMENT for a tokenizer.json rung cannot encode (the
// component, by name and JSON path), an end-of-text or BOS token that is not in the vocabulary (naming the file and
// key it came from).
StatusOr<LoadedTokenizer> LoadTextTokenizer(const std::string& path, const std::string& eot);

// The end-of-text id, for writing documents apart. INVALID_ARGUMENT where the tokenizer's folder names
// none, saying where rung looked and naming --eot.
StatusOr<int64_t> RequireEot(const LoadedTokenizer& loaded);

}  // namespace rung::data_tool
