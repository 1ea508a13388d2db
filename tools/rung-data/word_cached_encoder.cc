#include "tools/rung-data/word_cached_encoder.h"

namespace rung::data_tool {

WordCachedEncoder::WordCachedEncoder(const Tokenizer& tokenizer, size_t max_words)
    : tokenizer_(tokenizer), max_words_(max_words) {}

Status WordCachedEncoder::Encode(std::string_view text, std::vector<int>* ids) {
  if (!tokenizer_.pieces_stay_within_words()) return tokenizer_.Encode(text, ids);
  ids->clear();
  size_t word_start = 0;
  bool after_mark = false;
  for (size_t at = 0; at < text.size();) {
    const size_t mark = WhitespaceMarkLength(text, at);
    if (mark != 0 && !after_mark && at > word_start) {
      RUNG_RETURN_IF_ERROR(AppendWord(text.substr(word_start, at - word_start), ids));
      word_start = at;
    }
    after_mark = mark != 0;
    at += mark != 0 ? mark : 1;
  }
  if (word_start < text.size()) RUNG_RETURN_IF_ERROR(AppendWord(text.substr(word_start), ids));
  return Status::Ok();
}

Status WordCachedEncoder::AppendWord(std::string_view word, std::vector<int>* ids) {
  const bool cacheable = word.size() <= kMaxCachedWordBytes;
  if (cacheable) {
    key_.assign(word);
    auto found = cache_.find(key_);
    if (found != cache_.end()) {
      ++hits_;
      ids->insert(ids->end(), found->second.begin(), found->second.end());
      return Status::Ok();
    }
  }
  ++misses_;
  RUNG_RETURN_IF_ERROR(tokenizer_.Encode(word, &word_ids_));
  ids->insert(ids->end(), word_ids_.begin(), word_ids_.end());
  if (cacheable) {
    if (cache_.size() >= max_words_) cache_.clear();
    cache_.emplace(key_, word_ids_);
  }
  return Status::Ok();
}

}  // namespace rung::data_tool
