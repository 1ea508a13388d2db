// core/hf/added_token_matcher.h
//
// Finds a tokenizer.json's added tokens in text, as Hugging Face tokenizers' AddedVocabulary does:
// leftmost-longest matches, scanned left to right without overlap; a single_word token only where no
// word character (Unicode \w) touches it on either side (a discarded match is skipped over, not
// retried inside); lstrip takes in the whitespace before it (not reaching into the previous match),
// rstrip the whitespace after it. The result covers the text: the matched tokens and the stretches
// between them (empty stretches left out). A special token is matched and then left as text (the
// library's encode_special_tokens): its characters stay in the stretch around it, and no other added
// token is found inside or across it.
//
// Thread safety: Find is const and may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/hf/tokenizer_json.h"

namespace rung::hf {

struct TextSegment {
  size_t begin = 0, end = 0;    // bytes of the text
  std::optional<int32_t> id;    // the added token's id, or none for text between tokens
};

class AddedTokenMatcher {
 public:
  // `tokens` are matched by their `content` (the caller gives the form to match: raw, or normalized).
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  std::vector<TextSegment> Find(std::string_view text) const;

 private:
  std::vector<AddedToken> tokens_;
  std::vector<std::vector<size_t>> by_first_byte_;  // indexes into tokens_, longest first
};

}  // namespace rung::hf
