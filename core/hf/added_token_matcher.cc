#include "core/hf/added_token_matcher.h"

#include <algorithm>

#include <unicode/uchar.h>
#include <unicode/utf8.h>

namespace rung::hf {
namespace {

// Rust regex's Unicode \w: Alphabetic, marks, decimal digits, connector punctuation, Join_Control.
bool IsWordCharacter(UChar32 c) {
  if (u_hasBinaryProperty(c, UCHAR_ALPHABETIC) || u_hasBinaryProperty(c, UCHAR_JOIN_CONTROL)) return true;
  const int32_t mask = U_GET_GC_MASK(c);
  return (mask & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0;
}

// The character that ends at `end` (REQUIRES: end > 0), and where it starts.
UChar32 CharacterBefore(std::string_view text, size_t end, size_t* start) {
  auto at = static_cast<int32_t>(end);
  UChar32 c;
  U8_PREV(text.data(), 0, at, c);
  *start = static_cast<size_t>(at);
  return c;
}

UChar32 CharacterAt(std::string_view text, size_t begin, size_t* end) {
  auto at = static_cast<int32_t>(begin);
  UChar32 c;
  U8_NEXT(text.data(), at, static_cast<int32_t>(text.size()), c);
  *end = static_cast<size_t>(at);
  return c;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)), by_first_byte_(256) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return tokens_[a].content.size() > tokens_[b].content.size(); });
  }
}

std::vector<TextSegment> AddedTokenMatcher::Find(std::string_view text) const {
  std::vector<TextSegment> segments;
  if (tokens_.empty()) {  // no scan where nothing can match
    if (!text.empty()) segments.push_back({0, text.size(), std::nullopt});
    return segments;
  }
  size_t covered = 0;  // the end of the last match (with what it stripped)
  size_t at = 0;
  while (at < text.size()) {
    const AddedToken* found = nullptr;
    for (const size_t index : by_first_byte_[static_cast<unsigned char>(text[at])]) {
      const AddedToken& token = tokens_[index];
      if (text.compare(at, token.content.size(), token.content) == 0) {
        found = &token;
        break;
      }
    }
    if (found == nullptr) {
      ++at;
      continue;
    }
    size_t begin = at, end = at + found->content.size();
    at = end;  // the scan goes on after the match itself, whatever it strips
    if (found->special) continue;  // never read from text: its characters stay in the stretch
    if (found->single_word) {
      size_t unused;
      const bool word_before = begin > 0 && IsWordCharacter(CharacterBefore(text, begin, &unused));
      const bool word_after = end < text.size() && IsWordCharacter(CharacterAt(text, end, &unused));
      if (word_before || word_after) continue;
    }
    if (found->lstrip) {
      size_t start = begin;
      while (start > 0) {
        size_t previous;
        if (!u_isUWhiteSpace(CharacterBefore(text, start, &previous))) break;
        start = previous;
      }
      begin = std::max(start, covered);
    }
    if (found->rstrip) {
      while (end < text.size()) {
        size_t next;
        if (!u_isUWhiteSpace(CharacterAt(text, end, &next))) break;
        end = next;
      }
    }
    if (covered < begin) segments.push_back({covered, begin, std::nullopt});
    segments.push_back({begin, end, static_cast<int32_t>(found->id)});
    covered = end;
  }
  if (covered < text.size()) segments.push_back({covered, text.size(), std::nullopt});
  return segments;
}

}  // namespace rung::hf
