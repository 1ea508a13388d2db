// core/hf/text_normalizer.h
//
// A tokenizer.json's normalizer: its steps (NFC, NFKC, Prepend, Replace with a literal pattern) applied
// in order to one segment of text, as Hugging Face tokenizers applies them: Prepend adds its text only
// to a non-empty segment; Replace replaces every non-overlapping occurrence, left to right; NFC and
// NFKC are Unicode's (ICU's Normalizer2).
//
// Thread safety: Apply is const and may be called concurrently.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/hf/tokenizer_json.h"

namespace rung::hf {

class TextNormalizer {
 public:
  // INTERNAL where ICU cannot give its normalizers.
  static StatusOr<TextNormalizer> Create(std::vector<NormalizerStep> steps);

  bool empty() const { return steps_.empty(); }
  // *out = the normalized `text`; `continues`: the text goes on from text before it (a piece of a long
  // document after its first), so Prepend adds nothing. INTERNAL where ICU fails (invalid UTF-8).
  Status Apply(std::string_view text, std::string* out, bool continues = false) const;

 private:
  explicit TextNormalizer(std::vector<NormalizerStep> steps) : steps_(std::move(steps)) {}
  std::vector<NormalizerStep> steps_;
  const void* nfc_ = nullptr;   // icu::Normalizer2 (a process-wide ICU singleton)
  const void* nfkc_ = nullptr;
};

}  // namespace rung::hf
