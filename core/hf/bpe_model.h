// core/hf/bpe_model.h
//
// The BPE model of a tokenizer.json ("model": {"type": "BPE"}), applied to one pre-tokenized piece as
// Hugging Face tokenizers applies it (models/bpe in the Rust library), so the ids are the library's:
//   - ignore_merges: a piece that is a vocabulary entry is that one token;
//   - each character of the piece is a symbol (continuing_subword_prefix before every character but the
//     first, end_of_word_suffix after the last); a character outside the vocabulary becomes its bytes'
//     <0xNN> tokens where byte_fallback holds and all of them exist, else the unknown token (consecutive
//     ones fused into one where fuse_unk holds), else it is dropped;
//   - merges are applied lowest rank first, and among equal ranks leftmost first, each merge joining one
//     adjacent pair and offering the pairs it forms with its neighbours (a pair listed twice keeps its
//     later rank, as the library's map does).
//
// Thread safety: Encode is const and may be called concurrently.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/hf/tokenizer_json.h"

namespace rung::hf {

class BpeModel {
 public:
  // REQUIRES: `tokenizer` passed ParseTokenizerJson (every merge's parts and result are in the
  // vocabulary, the unknown token too).
  explicit BpeModel(const TokenizerJson& tokenizer);

  // Appends the ids of `piece` to *ids.
  void Encode(std::string_view piece, std::vector<int32_t>* ids) const;

  // The id of a vocabulary entry, if it is one.
  std::optional<int32_t> TokenId(std::string_view token) const;

 private:
  struct MergeResult {
    int32_t rank;
    int32_t id;
  };
  static uint64_t PairKey(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }

  std::vector<std::string> tokens_;                        // storage the lookup's keys point into
  std::unordered_map<std::string_view, int32_t> vocab_;
  std::unordered_map<uint64_t, MergeResult> merges_;
  std::optional<int32_t> unk_id_;
  std::array<int32_t, 256> byte_ids_;  // <0xNN>'s id, or -1
  bool byte_fallback_, fuse_unk_, ignore_merges_;
  std::string continuing_subword_prefix_, end_of_word_suffix_;
};

}  // namespace rung::hf
