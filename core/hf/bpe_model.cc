#include "core/hf/bpe_model.h"

#include <cstdio>
#include <queue>

#include <unicode/utf8.h>

namespace rung::hf {
namespace {

struct Symbol {
  int32_t id;
  int32_t prev, next;  // indexes of the neighbouring live symbols, -1 at the ends
  int32_t length;      // bytes of the piece it covers; 0 once merged into its left neighbour
};

struct Merge {
  int32_t position;
  int32_t rank;
  int32_t id;
  // Lowest rank first, then leftmost (std::priority_queue pops the largest).
  bool operator<(const Merge& other) const {
    return rank != other.rank ? rank > other.rank : position > other.position;
  }
};

}  // namespace

BpeModel::BpeModel(const TokenizerJson& tokenizer)
    : byte_fallback_(tokenizer.byte_fallback),
      fuse_unk_(tokenizer.fuse_unk),
      ignore_merges_(tokenizer.ignore_merges),
      continuing_subword_prefix_(tokenizer.continuing_subword_prefix),
      end_of_word_suffix_(tokenizer.end_of_word_suffix) {
  tokens_.reserve(tokenizer.vocab.size());
  vocab_.reserve(tokenizer.vocab.size());
  for (const auto& [token, id] : tokenizer.vocab) {
    tokens_.push_back(token);
    vocab_.emplace(tokens_.back(), static_cast<int32_t>(id));
  }
  merges_.reserve(tokenizer.merges.size());
  for (size_t rank = 0; rank < tokenizer.merges.size(); ++rank) {
    const auto& [left, right] = tokenizer.merges[rank];
    const std::string merged = left + right.substr(continuing_subword_prefix_.size());
    merges_[PairKey(vocab_.at(left), vocab_.at(right))] = MergeResult{static_cast<int32_t>(rank), vocab_.at(merged)};
  }
  if (tokenizer.unk_token) unk_id_ = vocab_.at(*tokenizer.unk_token);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    const auto it = vocab_.find(name);
    byte_ids_[static_cast<size_t>(b)] = it == vocab_.end() ? -1 : it->second;
  }
}

std::optional<int32_t> BpeModel::TokenId(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::Encode(std::string_view piece, std::vector<int32_t>* ids) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    if (const auto it = vocab_.find(piece); it != vocab_.end()) {
      ids->push_back(it->second);
      return;
    }
  }
  std::vector<Symbol> symbols;
  symbols.reserve(piece.size());
  auto add = [&](int32_t id, int32_t length) {
    const auto index = static_cast<int32_t>(symbols.size());
    if (index > 0) symbols.back().next = index;
    symbols.push_back(Symbol{id, index - 1, -1, length});
  };
  int32_t unknown_bytes = 0;  // bytes of a pending unknown token (0: none pending)
  std::string affixed;
  for (size_t at = 0; at < piece.size();) {
    auto next = static_cast<int64_t>(at);
    U8_FWD_1(piece.data(), next, static_cast<int64_t>(piece.size()));  // one character on
    const auto length = static_cast<size_t>(next) - at;
    std::string_view character = piece.substr(at, length);
    const bool first = at == 0, last = at + length == piece.size();
    at += length;
    if ((!first && !continuing_subword_prefix_.empty()) || (last && !end_of_word_suffix_.empty())) {
      affixed.assign(!first ? continuing_subword_prefix_ : "");
      affixed.append(character);
      if (last) affixed.append(end_of_word_suffix_);
      character = affixed;
    }
    if (const auto it = vocab_.find(character); it != vocab_.end()) {
      if (unknown_bytes > 0) {
        add(*unk_id_, unknown_bytes);
        unknown_bytes = 0;
      }
      add(it->second, static_cast<int32_t>(length));
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (const char byte : character) all = all && byte_ids_[static_cast<unsigned char>(byte)] >= 0;
      if (all) {
        for (const char byte : character) add(byte_ids_[static_cast<unsigned char>(byte)], 1);
        continue;
      }
    }
    if (!unk_id_) continue;
    if (unknown_bytes > 0 && !fuse_unk_) add(*unk_id_, unknown_bytes);
    unknown_bytes = (unknown_bytes > 0 && fuse_unk_ ? unknown_bytes : 0) + static_cast<int32_t>(length);
  }
  if (unknown_bytes > 0) add(*unk_id_, unknown_bytes);

  std::priority_queue<Merge> queue;
  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    const auto it = merges_.find(PairKey(symbols[i].id, symbols[i + 1].id));
    if (it != merges_.end()) queue.push(Merge{static_cast<int32_t>(i), it->second.rank, it->second.id});
  }
  while (!queue.empty()) {
    const Merge top = queue.top();
    queue.pop();
    Symbol& current = symbols[static_cast<size_t>(top.position)];
    if (current.length == 0 || current.next == -1) continue;
    const Symbol right = symbols[static_cast<size_t>(current.next)];
    const auto still = merges_.find(PairKey(current.id, right.id));
    if (still == merges_.end() || still->second.id != top.id) continue;  // an expired entry
    symbols[static_cast<size_t>(current.next)].length = 0;
    current.id = top.id;
    current.length += right.length;
    current.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.position;
    if (current.prev >= 0) {
      const auto it = merges_.find(PairKey(symbols[static_cast<size_t>(current.prev)].id, current.id));
      if (it != merges_.end()) queue.push(Merge{current.prev, it->second.rank, it->second.id});
    }
    if (current.next >= 0) {
      const auto it = merges_.find(PairKey(current.id, symbols[static_cast<size_t>(current.next)].id));
      if (it != merges_.end()) queue.push(Merge{top.position, it->second.rank, it->second.id});
    }
  }
  for (const Symbol& symbol : symbols) {
    if (symbol.length != 0) ids->push_back(symbol.id);
  }
}

}  // namespace rung::hf
