// core/hf/tokenizer_json.h
//
// A Hugging Face tokenizer.json, read into what an encoder of the two BPE families needs:
//   byte-level BPE (GPT-2, Llama 3, Qwen2/3, SmolLM): text split by the pre-tokenizer's regexes (Split,
//     or ByteLevel's own GPT-2 pattern where use_regex) and Digits, each piece's bytes mapped to
//     GPT-2's byte alphabet, then merged;
//   SentencePiece-style BPE (Llama 2, Mistral): spaces replaced by "▁" and "▁" prepended (the
//     normalizer's Prepend and Replace, or the Metaspace pre-tokenizer), merged, unknown characters
//     spelled as <0xNN> byte tokens (byte_fallback).
// Components outside these are refused by name and JSON path: "t/tokenizer.json: key 'model.type':
// 'Unigram' is not supported (BPE)". Merges are read in either form tokenizers writes ("a b", or
// ["a", "b"] since 0.20). Every merge's parts and result, every added token and the unknown token must
// be in the vocabulary (or be an added token); ids are unique; each added token's id must be the one
// Hugging Face tokenizers gives it when it loads the file (it ignores the file's: a content it knows
// keeps its id, a new one takes the next after the vocabulary's entries and the added tokens before it).
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/common/status.h"

namespace rung::hf {

enum class TokenizerFamily { kByteLevelBpe, kSentencePieceBpe };

// tokenizer.json's added_tokens: matched in the text before the model runs (special ones only where
// the caller asks for them).
struct AddedToken {
  int64_t id = 0;
  std::string content;
  bool special = false;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false;
};

// One step of the pre-tokenizer, in order.
struct PreTokenizerStep {
  enum class Kind { kSplit, kDigits, kByteLevel, kMetaspace } kind = Kind::kSplit;
  std::string pattern;             // kSplit: the regex (Regex) or the literal (String)
  bool pattern_is_regex = true;
  std::string behavior = "Isolated";  // kSplit: Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous
  bool invert = false;
  bool individual_digits = false;  // kDigits
  bool add_prefix_space = false;   // kByteLevel
  bool use_regex = true;           // kByteLevel: split with GPT-2's pattern first
  std::string replacement = "\xE2\x96\x81";  // kMetaspace: "▁"
  std::string prepend_scheme = "always";     // kMetaspace: always, first, never
  bool split = true;                         // kMetaspace
};

// One step of the normalizer, in order.
struct NormalizerStep {
  enum class Kind { kNfc, kNfkc, kPrepend, kReplace } kind = Kind::kNfc;
  std::string prepend;                 // kPrepend
  std::string pattern, content;        // kReplace (a literal String pattern)
};

struct TokenizerJson {
  TokenizerFamily family = TokenizerFamily::kByteLevelBpe;
  std::unordered_map<std::string, int64_t> vocab;
  std::vector<std::pair<std::string, std::string>> merges;  // by rank
  bool byte_fallback = false;
  bool fuse_unk = false;
  bool ignore_merges = false;  // a piece that is a whole vocabulary entry is that token (Llama 3)
  std::optional<std::string> unk_token;
  std::string continuing_subword_prefix, end_of_word_suffix;
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  std::vector<AddedToken> added_tokens;
  // post_processor TemplateProcessing's "single" template: the special tokens around a sequence, by
  // name and by id (the ids its special_tokens map gives each name, else the vocabulary's).
  std::vector<std::string> prefix_tokens, suffix_tokens;
  std::vector<int64_t> prefix_ids, suffix_ids;
  int64_t vocab_size = 0;  // the largest id + 1
};

// Parses tokenizer.json's text; `source` names it in messages.
StatusOr<TokenizerJson> ParseTokenizerJson(std::string_view text, const std::string& source);

}  // namespace rung::hf
