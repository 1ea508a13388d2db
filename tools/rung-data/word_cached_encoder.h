// tools/rung-data/word_cached_encoder.h
//
// Encodes documents for one thread a word at a time, through a cache of the words it has already
// encoded: natural text repeats its words, so most of a corpus is looked up rather than encoded. The
// ids are those of Tokenizer::Encode on the whole document: the cache is used only when the tokenizer
// says word-by-word encoding is exact (Tokenizer::pieces_stay_within_words); otherwise every document is
// encoded whole. A word starts where a run of whitespace marks (spaces or U+2581) follows anything else
// and runs to the next such start, so " the", "   Elizabeth,\n" and a first word without a space are
// words. Long words are encoded but not kept, and the cache is emptied when it holds `max_words`, so its
// memory stays bounded.
//
// Not thread-safe: one encoder per thread (the tokenizer it reads may be shared).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/common/status.h"
#include "tools/rung-data/tokenizer.h"

namespace rung::data_tool {

class WordCachedEncoder {
 public:
  static constexpr size_t kDefaultMaxWords = size_t{1} << 18;
  static constexpr size_t kMaxCachedWordBytes = 64;

  explicit WordCachedEncoder(const Tokenizer& tokenizer, size_t max_words = kDefaultMaxWords);

  // Replaces *ids with the ids of `text`. INTERNAL if SentencePiece fails.
  Status Encode(std::string_view text, std::vector<int>* ids);

  // Words looked up and found, since construction (for tests and benchmarks).
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

 private:
  // Appends the ids of one word to *ids.
  Status AppendWord(std::string_view word, std::vector<int>* ids);

  const Tokenizer& tokenizer_;
  const size_t max_words_;
  std::unordered_map<std::string, std::vector<int>> cache_;
  std::string key_;             // reused lookup key (no allocation per lookup)
  std::vector<int> word_ids_;   // reused miss buffer
  size_t hits_ = 0;
  size_t misses_ = 0;
};

}  // namespace rung::data_tool
