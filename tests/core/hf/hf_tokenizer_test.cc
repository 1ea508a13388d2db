// rung's tokenizer.json encoder (hf_tokenizer.h) on tiny handcrafted tokenizers, one behaviour at a
// time. Every expected id list is Hugging Face tokenizers 0.23.2's (the Node binding pinned in
// tests/tokenizers), computed once with the file's special added tokens made unmatchable in text (their
// content replaced, the entries kept), since rung never reads a special token from text. The byte
// lengths and the error messages are rung's own.
#include "core/hf/hf_tokenizer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/hf/pre_tokenizer.h"

// A namespace of its own: the unity build puts the hf test files in one translation unit.
namespace rung::hf::hf_tokenizer_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---- BPE model ----

// Merges: b+c outranks a+b; a+a overlaps in "aaa"; aa+aa builds "aaaa".
constexpr const char* kMergeOrder = R"json({
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "aa": 6, "aaaa": 7},
            "merges": ["b c", "a b", "a bc", "a a", "aa aa"]}
})json";

// "a b" is listed twice, before and after "b c".
constexpr const char* kDuplicateMerge = R"json({
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4},
            "merges": ["a b", "b c", "a b"]}
})json";

// Byte fallback with <0xC3> <0xA9> (all of "é") and <0xE2> <0x82> (not all of "€", E2 82 AC).
constexpr const char* kByteFallback = R"json({
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": false, "byte_fallback": true,
            "vocab": {"<unk>": 0, "<0xC3>": 1, "<0xA9>": 2, "<0xE2>": 3, "<0x82>": 4, "a": 5, "b": 6, "ab": 7},
            "merges": ["a b"]}
})json";

constexpr const char* kUnkFused = R"json({
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true,
            "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3}, "merges": ["a b"]}
})json";

constexpr const char* kUnkUnfused = R"json({
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": false,
            "vocab": {"<unk>": 0, "a": 1, "b": 2, "ab": 3}, "merges": ["a b"]}
})json";

constexpr const char* kNoUnk = R"json({
  "model": {"type": "BPE", "unk_token": null,
            "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}
})json";

// "abc" is an entry no merge forms from the merges' order (b+c first leaves a, bc).
constexpr const char* kIgnoreMerges = R"json({
  "model": {"type": "BPE", "ignore_merges": true,
            "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}, "merges": ["b c", "a b"]}
})json";

constexpr const char* kKeepMerges = R"json({
  "model": {"type": "BPE", "ignore_merges": false,
            "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}, "merges": ["b c", "a b"]}
})json";

constexpr const char* kSubwordPrefix = R"json({
  "model": {"type": "BPE", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "vocab": {"[UNK]": 0, "a": 1, "b": 2, "##a": 3, "##b": 4, "##c": 5, "ab": 6, "##bc": 7, "abc": 8},
            "merges": ["##b ##c", "a ##b", "a ##bc"]}
})json";

constexpr const char* kWordSuffix = R"json({
  "model": {"type": "BPE", "end_of_word_suffix": "</w>",
            "vocab": {"a": 0, "b": 1, "a</w>": 2, "b</w>": 3, "ab</w>": 4, "ab": 5},
            "merges": ["a b</w>", "a b"]}
})json";

// ---- pre-tokenizers ----

// A tokenizer.json of `model` (the "model" object) behind `pre_tokenizer` (a component; "" for none).
std::string WithPreTokenizer(const std::string& pre_tokenizer, const std::string& model) {
  return "{" + (pre_tokenizer.empty() ? std::string() : "\"pre_tokenizer\": " + pre_tokenizer + ",\n") +
         "\"model\": " + model + "}";
}

// A Split of `pattern` ({"Regex": ...} or {"String": ...}) with `behavior` and `invert`.
std::string Split(const std::string& pattern, const std::string& behavior, bool invert) {
  return R"({"type": "Split", "pattern": )" + pattern + R"(, "behavior": ")" + behavior + R"(", "invert": )" +
         (invert ? "true" : "false") + "}";
}

// Split's tokenizers share one model whose merges join a, b and "-" across any cut ("." and "ab" too).
constexpr const char* kDashModel = R"json({"type": "BPE",
  "vocab": {"a": 0, "b": 1, "-": 2, ".": 3, "a-": 4, "-b": 5, "--": 6, "b-": 7, "-a": 8, "ab": 9, ".a": 10},
  "merges": ["a -", "b -", "- b", "- a", "- -", "a b", ". a"]})json";
const std::string kSplitRemoved = WithPreTokenizer(Split(R"({"Regex": "-"})", "Removed", false), kDashModel);
const std::string kSplitIsolated = WithPreTokenizer(Split(R"({"Regex": "-"})", "Isolated", false), kDashModel);
const std::string kSplitMergedWithPrevious =
    WithPreTokenizer(Split(R"({"Regex": "-"})", "MergedWithPrevious", false), kDashModel);
const std::string kSplitMergedWithNext = WithPreTokenizer(Split(R"({"Regex": "-"})", "MergedWithNext", false), kDashModel);
const std::string kSplitContiguous = WithPreTokenizer(Split(R"({"Regex": "-"})", "Contiguous", false), kDashModel);
const std::string kSplitInvertedRemoved = WithPreTokenizer(Split(R"({"Regex": "-"})", "Removed", true), kDashModel);
const std::string kSplitInvertedMergedWithPrevious =
    WithPreTokenizer(Split(R"({"Regex": "-"})", "MergedWithPrevious", true), kDashModel);
const std::string kSplitNone = WithPreTokenizer("", kDashModel);
// A String pattern is a literal: "." cuts at the dot only (as a regex it would cut "a" from "b").
const std::string kSplitString = WithPreTokenizer(Split(R"({"String": "."})", "Isolated", false), kDashModel);
// \s removed; a character it left would be <unk>.
constexpr const char* kSplitWhitespace = R"json({
  "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\s"}, "behavior": "Removed", "invert": false},
  "model": {"type": "BPE", "unk_token": "<unk>", "vocab": {"<unk>": 0, "a": 1, "b": 2}, "merges": []}
})json";
// \S+ removed: what is left is the whitespace, each character its own token.
constexpr const char* kSplitNonWhitespace = R"json({
  "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\S+"}, "behavior": "Removed", "invert": false},
  "model": {"type": "BPE", "unk_token": "<unk>", "vocab": {"<unk>": 0, "a": 1, " ": 2, "\u000b": 3, "\u0085": 4},
            "merges": []}
})json";

// Digits, with merges that would join a letter to a digit and digits to each other.
constexpr const char* kDigitsModel = R"json({"type": "BPE",
            "vocab": {"a": 0, "1": 1, "2": 2, "\u0663": 3, "12": 4, "12\u0663": 5, "a1": 6, "\u00b2": 7, "a\u00b2": 8,
                      "\u2167": 9, "a\u2167": 10},
            "merges": ["1 2", "12 \u0663", "a 1", "a \u00b2", "a \u2167"]})json";
const std::string kDigitsRuns =
    WithPreTokenizer(R"({"type": "Digits", "individual_digits": false})", kDigitsModel);
const std::string kDigitsIndividual =
    WithPreTokenizer(R"({"type": "Digits", "individual_digits": true})", kDigitsModel);

// ByteLevel: "Ġ" is the space, "Ã©" is "é" (C3 A9).
constexpr const char* kByteLevelModel = R"json({"type": "BPE",
            "vocab": {"a": 0, "b": 1, "\u0120": 2, "ab": 3, "\u0120ab": 4, "b\u0120": 5, "\u0120a": 6, "\u00c3": 7,
                      "\u00a9": 8, "\u00c3\u00a9": 9},
            "merges": ["a b", "\u0120 ab", "b \u0120", "\u0120 a", "\u00c3 \u00a9"]})json";
const std::string kByteLevel = WithPreTokenizer(R"({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true})", kByteLevelModel);
const std::string kByteLevelPrefixSpace = WithPreTokenizer(R"({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true})", kByteLevelModel);
const std::string kByteLevelNoRegex = WithPreTokenizer(R"({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false})", kByteLevelModel);
// Llama 3's shape: a Split, then ByteLevel without its regex but with add_prefix_space (each piece).
constexpr const char* kSplitThenByteLevel = R"json({
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "\\p{L}+"}, "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": false}]},
  "model": {"type": "BPE",
            "vocab": {"a": 0, "b": 1, "\u0120": 2, "ab": 3, "\u0120ab": 4, "b\u0120": 5, "\u0120a": 6, "\u00c3": 7,
                      "\u00a9": 8, "\u00c3\u00a9": 9},
            "merges": ["a b", "\u0120 ab", "b \u0120", "\u0120 a", "\u00c3 \u00a9"]}
})json";

// Metaspace with `scheme` and `split`, "<x>" a non-special added token.
std::string Metaspace(const std::string& scheme, bool split) {
  return R"json({
  "added_tokens": [{"id": 6, "content": "<x>", "single_word": false, "lstrip": false, "rstrip": false,
                    "normalized": false, "special": false}],
  "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": ")json" + scheme +
         R"json(", "split": )json" + (split ? "true" : "false") + R"json(},
  "model": {"type": "BPE", "vocab": {"\u2581": 0, "a": 1, "b": 2, "\u2581a": 3, "\u2581b": 4, "\u2581a\u2581b": 5},
            "merges": ["\u2581 a", "\u2581 b", "\u2581a \u2581b"]}
})json";
}
const std::string kMetaspaceAlways = Metaspace("always", true);
const std::string kMetaspaceNoSplit = Metaspace("always", false);
const std::string kMetaspaceFirst = Metaspace("first", true);
const std::string kMetaspaceNever = Metaspace("never", true);

// ---- normalizers ----

constexpr const char* kNfc = R"json({
  "normalizer": {"type": "NFC"},
  "model": {"type": "BPE", "vocab": {"e": 0, "\u0301": 1, "\u00e9": 2, "x": 3}, "merges": []}
})json";
constexpr const char* kNoNormalizer = R"json({
  "model": {"type": "BPE", "vocab": {"e": 0, "\u0301": 1, "\u00e9": 2, "x": 3}, "merges": []}
})json";
constexpr const char* kNfkc = R"json({
  "normalizer": {"type": "NFKC"},
  "model": {"type": "BPE", "vocab": {"f": 0, "i": 1, "fi": 2, "1": 3, "x": 4, "\ufb01": 5}, "merges": ["f i"]}
})json";
// Llama 2's normalizer, with "<x>" a non-special added token matched in the raw text.
constexpr const char* kPrependReplace = R"json({
  "added_tokens": [{"id": 6, "content": "<x>", "single_word": false, "lstrip": false, "rstrip": false,
                    "normalized": false, "special": false}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
  "model": {"type": "BPE", "vocab": {"\u2581": 0, "a": 1, "b": 2, "\u2581a": 3, "\u2581b": 4, "<": 5},
            "merges": ["\u2581 a", "\u2581 b"]}
})json";
constexpr const char* kReplace = R"json({
  "normalizer": {"type": "Replace", "pattern": {"String": "ab"}, "content": "b"},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "bb": 2}, "merges": ["b b"]}
})json";

// ---- added tokens ----

// Non-special added tokens (ids 13-18, after the vocabulary) and one special one, "<s>" (19).
constexpr const char* kAdded = R"json({
  "added_tokens": [
    {"id": 13, "content": "ab", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
    {"id": 14, "content": "abc", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
    {"id": 15, "content": "bcd", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
    {"id": 16, "content": "[L]", "single_word": false, "lstrip": true, "rstrip": false, "normalized": false, "special": false},
    {"id": 17, "content": "[R]", "single_word": false, "lstrip": false, "rstrip": true, "normalized": false, "special": false},
    {"id": 18, "content": "cd", "single_word": true, "lstrip": false, "rstrip": false, "normalized": false, "special": false},
    {"id": 19, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "model": {"type": "BPE",
            "vocab": {"a": 0, "b": 1, "c": 2, "d": 3, " ": 4, "-": 5, "\u00e9": 6, "x": 7, "_": 8, "<": 9, "s": 10,
                      ">": 11, "\u3000": 12},
            "merges": []}
})json";

// "x y" is matched in the normalized text ("x▁y"), "z w" in the raw text.
constexpr const char* kAddedNormalized = R"json({
  "added_tokens": [
    {"id": 5, "content": "x y", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": false},
    {"id": 6, "content": "z w", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}],
  "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
  "model": {"type": "BPE", "vocab": {"x": 0, "y": 1, "z": 2, "w": 3, "\u2581": 4}, "merges": []}
})json";
// The same with Prepend first: a normalized added token is matched in its normalized form, "▁x▁y".
constexpr const char* kAddedNormalizedPrepend = R"json({
  "added_tokens": [
    {"id": 5, "content": "x y", "single_word": false, "lstrip": false, "rstrip": false, "normalized": true, "special": false},
    {"id": 6, "content": "z w", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
  "model": {"type": "BPE", "vocab": {"x": 0, "y": 1, "z": 2, "w": 3, "\u2581": 4}, "merges": []}
})json";

// Llama 2's template: <s> before, and here </s> after; both special tokens are vocabulary entries too.
constexpr const char* kTemplate = R"json({
  "added_tokens": [
    {"id": 0, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "</s>", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                       "</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
  "model": {"type": "BPE", "vocab": {"<s>": 0, "</s>": 1, "a": 2, "b": 3, "<": 4, "s": 5, ">": 6, "/": 7, "ab": 8},
            "merges": ["a b"]}
})json";

// ---- SentencePiece-style word cuts ----

// Llama 2's shape: "▁" only leads tokens ("▁▁" too), so the text can be cut into words.
constexpr const char* kSentencePieceWords = R"json({
  "added_tokens": [
    {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
            "vocab": {"<unk>": 0, "<s>": 1, "<0x21>": 2, "\u2581": 3, "a": 4, "b": 5, "c": 6, "\u2581a": 7, "\u2581b": 8,
                      "ab": 9, "\u2581ab": 10, "\u2581\u2581": 11, "ba": 12, "\u2581c": 13},
            "merges": ["\u2581 a", "\u2581 b", "a b", "\u2581a b", "\u2581 \u2581", "b a", "\u2581 c"]}
})json";
// The same with "a▁b", a token that spans a word cut, and a merge that forms it.
constexpr const char* kSentencePieceJoined = R"json({
  "added_tokens": [
    {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
            "vocab": {"<unk>": 0, "<s>": 1, "<0x21>": 2, "\u2581": 3, "a": 4, "b": 5, "c": 6, "\u2581a": 7, "\u2581b": 8,
                      "ab": 9, "\u2581ab": 10, "\u2581\u2581": 11, "ba": 12, "\u2581c": 13, "a\u2581b": 14},
            "merges": ["a \u2581b", "\u2581 a", "\u2581 b", "a b", "\u2581a b", "\u2581 \u2581", "b a", "\u2581 c"]}
})json";

// ---- byte lengths ----

// Byte-level: "Ġab" is 3 bytes, "Ã©" 2 ("é"), "ðŁĺĢ" 4 (U+1F600), "Ċ" 1.
constexpr const char* kByteLevelLengths = R"json({
  "added_tokens": [
    {"id": 5, "content": "<|end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 6, "content": "<x>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}],
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "vocab": {"a": 0, "\u0120ab": 1, "\u00c3\u00a9": 2, "\u00f0\u0141\u013a\u0122": 3, "\u010a": 4},
            "merges": []}
})json";
// SentencePiece-style: "▁" is one byte (a space), <0xNN> one, "é" two; no entry has id 7.
constexpr const char* kSentencePieceLengths = R"json({
  "added_tokens": [
    {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
    {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
            "vocab": {"<unk>": 0, "<s>": 1, "<0xE9>": 2, "\u2581": 3, "\u2581\u2581": 4, "\u00e9": 5, "\u2581ab\u00e9": 6,
                      "a": 8},
            "merges": []}
})json";

std::unique_ptr<HfTokenizer> Load(const std::string& json) {
  StatusOr<std::unique_ptr<HfTokenizer>> tokenizer = HfTokenizer::FromJson(json, "t/tokenizer.json");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  if (!tokenizer.ok()) return nullptr;
  return std::move(tokenizer).value();
}

// rung's ids for `text`.
std::vector<int32_t> Ids(const std::string& json, std::string_view text, bool add_special_tokens = false) {
  const std::unique_ptr<HfTokenizer> tokenizer = Load(json);
  if (tokenizer == nullptr) return {-1};
  const std::unique_ptr<HfTokenizer::Session> session = tokenizer->NewSession();
  std::vector<int32_t> ids = {-2};  // Encode replaces it
  const Status status = tokenizer->Encode(text, add_special_tokens, *session, &ids);
  EXPECT_TRUE(status.ok()) << status.message();
  return ids;
}

// FromJson's error for a file it refuses.
Status LoadError(const std::string& json) {
  StatusOr<std::unique_ptr<HfTokenizer>> tokenizer = HfTokenizer::FromJson(json, "t/tokenizer.json");
  return tokenizer.ok() ? Status::Ok() : tokenizer.status();
}

// ---- the BPE model ----

TEST(HfTokenizerBpe, MergesTheLowestRankFirst) {
  // Hugging Face tokenizers 0.23.2's ids: b+c (rank 0) before a+b (rank 1), then a+bc.
  EXPECT_THAT(Ids(kMergeOrder, "abc"), ElementsAre(5));
  EXPECT_THAT(Ids(kMergeOrder, "cab"), ElementsAre(2, 3));
  EXPECT_THAT(Ids(kMergeOrder, "ab"), ElementsAre(3));
}

TEST(HfTokenizerBpe, OverlappingPairsOfEqualRankMergeLeftmostFirst) {
  // Hugging Face tokenizers 0.23.2's ids: "aaa" is aa, a (not a, aa); "aaaaa" is aaaa, a.
  EXPECT_THAT(Ids(kMergeOrder, "aaa"), ElementsAre(6, 0));
  EXPECT_THAT(Ids(kMergeOrder, "aaaa"), ElementsAre(7));
  EXPECT_THAT(Ids(kMergeOrder, "aaaaa"), ElementsAre(7, 0));
}

TEST(HfTokenizerBpe, APairListedTwiceKeepsItsLaterRank) {
  // Hugging Face tokenizers 0.23.2's ids: a+b ranks 2, after b+c, so "abc" is a, bc.
  EXPECT_THAT(Ids(kDuplicateMerge, "abc"), ElementsAre(0, 4));
  EXPECT_THAT(Ids(kDuplicateMerge, "ab"), ElementsAre(3));
}

TEST(HfTokenizerBpe, ByteFallbackSpellsAnUnknownCharacterAsItsByteTokens) {
  // Hugging Face tokenizers 0.23.2's ids: "é" is <0xC3> <0xA9>.
  EXPECT_THAT(Ids(kByteFallback, "a\xC3\xA9" "b"), ElementsAre(5, 1, 2, 6));
  EXPECT_THAT(Ids(kByteFallback, "ab"), ElementsAre(7));
}

TEST(HfTokenizerBpe, ByteFallbackWithoutAllOfACharactersBytesGivesUnk) {
  // Hugging Face tokenizers 0.23.2's ids: "€" (E2 82 AC) lacks <0xAC>, so it is <unk>, one per
  // character (fuse_unk false), and none of its present byte tokens.
  EXPECT_THAT(Ids(kByteFallback, "a€b"), ElementsAre(5, 0, 6));
  EXPECT_THAT(Ids(kByteFallback, "a€€b"), ElementsAre(5, 0, 0, 6));
}

TEST(HfTokenizerBpe, FuseUnkGivesOneUnkForConsecutiveUnknownCharacters) {
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(Ids(kUnkFused, "axyb"), ElementsAre(1, 0, 2));
  EXPECT_THAT(Ids(kUnkFused, "ax b"), ElementsAre(1, 0, 2));
  EXPECT_THAT(Ids(kUnkFused, "xab"), ElementsAre(0, 3));
}

TEST(HfTokenizerBpe, UnfusedUnkGivesOneUnkPerUnknownCharacter) {
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(Ids(kUnkUnfused, "axyb"), ElementsAre(1, 0, 0, 2));
  EXPECT_THAT(Ids(kUnkUnfused, "ax b"), ElementsAre(1, 0, 0, 2));
  EXPECT_THAT(Ids(kUnkUnfused, "xab"), ElementsAre(0, 3));
}

TEST(HfTokenizerBpe, WithoutAnUnkTokenAnUnknownCharacterIsDroppedAndItsNeighboursMerge) {
  // Hugging Face tokenizers 0.23.2's ids: "axyb" is "ab".
  EXPECT_THAT(Ids(kNoUnk, "axyb"), ElementsAre(2));
  EXPECT_THAT(Ids(kNoUnk, "xab"), ElementsAre(2));
  EXPECT_THAT(Ids(kNoUnk, "x"), IsEmpty());
}

TEST(HfTokenizerBpe, IgnoreMergesTakesAPieceThatIsAVocabularyEntryWhole) {
  // Hugging Face tokenizers 0.23.2's ids: "abc" is its entry with ignore_merges, a, bc without.
  EXPECT_THAT(Ids(kIgnoreMerges, "abc"), ElementsAre(5));
  EXPECT_THAT(Ids(kIgnoreMerges, "bc"), ElementsAre(4));
  EXPECT_THAT(Ids(kIgnoreMerges, "abcab"), ElementsAre(0, 4, 3));
  EXPECT_THAT(Ids(kKeepMerges, "abc"), ElementsAre(0, 4));
  EXPECT_THAT(Ids(kKeepMerges, "abcab"), ElementsAre(0, 4, 3));
}

TEST(HfTokenizerBpe, ContinuingSubwordPrefixMarksEveryCharacterButTheFirst) {
  // Hugging Face tokenizers 0.23.2's ids: ##b + ##c is ##bc, a + ##bc is abc; a leading "c" is [UNK].
  EXPECT_THAT(Ids(kSubwordPrefix, "abc"), ElementsAre(8));
  EXPECT_THAT(Ids(kSubwordPrefix, "ab"), ElementsAre(6));
  EXPECT_THAT(Ids(kSubwordPrefix, "ba"), ElementsAre(2, 3));
  EXPECT_THAT(Ids(kSubwordPrefix, "cab"), ElementsAre(0, 3, 4));
}

TEST(HfTokenizerBpe, EndOfWordSuffixMarksTheLastCharacter) {
  // Hugging Face tokenizers 0.23.2's ids: a + b</w> (rank 0) outranks a + b.
  EXPECT_THAT(Ids(kWordSuffix, "ab"), ElementsAre(4));
  EXPECT_THAT(Ids(kWordSuffix, "aab"), ElementsAre(0, 4));
  EXPECT_THAT(Ids(kWordSuffix, "ba"), ElementsAre(1, 2));
  EXPECT_THAT(Ids(kWordSuffix, "abab"), ElementsAre(5, 4));
}

// ---- pre-tokenizers ----

TEST(HfTokenizerSplit, WithoutASplitMergesCrossTheDelimiters) {
  // Hugging Face tokenizers 0.23.2's ids: a-, b-, -a.
  EXPECT_THAT(Ids(kSplitNone, "a-b--a"), ElementsAre(4, 7, 8));
  EXPECT_THAT(Ids(kSplitNone, "ab.a"), ElementsAre(9, 10));
}

TEST(HfTokenizerSplit, RemovedDropsTheMatches) {
  // Hugging Face tokenizers 0.23.2's ids: a, b, a.
  EXPECT_THAT(Ids(kSplitRemoved, "a-b--a"), ElementsAre(0, 1, 0));
}

TEST(HfTokenizerSplit, IsolatedKeepsEachMatchAlone) {
  // Hugging Face tokenizers 0.23.2's ids: a, -, b, -, -, a.
  EXPECT_THAT(Ids(kSplitIsolated, "a-b--a"), ElementsAre(0, 2, 1, 2, 2, 0));
}

TEST(HfTokenizerSplit, MergedWithPreviousJoinsAMatchToTheTextBefore) {
  // Hugging Face tokenizers 0.23.2's ids: a-, b-, -, a.
  EXPECT_THAT(Ids(kSplitMergedWithPrevious, "a-b--a"), ElementsAre(4, 7, 2, 0));
}

TEST(HfTokenizerSplit, MergedWithNextJoinsAMatchToTheTextAfter) {
  // Hugging Face tokenizers 0.23.2's ids: a, -b, -, -a.
  EXPECT_THAT(Ids(kSplitMergedWithNext, "a-b--a"), ElementsAre(0, 5, 2, 8));
}

TEST(HfTokenizerSplit, ContiguousJoinsAdjacentMatches) {
  // Hugging Face tokenizers 0.23.2's ids: a, -, b, --, a.
  EXPECT_THAT(Ids(kSplitContiguous, "a-b--a"), ElementsAre(0, 2, 1, 6, 0));
}

TEST(HfTokenizerSplit, InvertSwapsTheMatchesAndTheTextBetween) {
  // Hugging Face tokenizers 0.23.2's ids: Removed keeps the three "-"; MergedWithPrevious gives a,
  // -b, -, -a.
  EXPECT_THAT(Ids(kSplitInvertedRemoved, "a-b--a"), ElementsAre(2, 2, 2));
  EXPECT_THAT(Ids(kSplitInvertedMergedWithPrevious, "a-b--a"), ElementsAre(0, 5, 2, 8));
}

TEST(HfTokenizerSplit, AStringPatternIsALiteral) {
  // Hugging Face tokenizers 0.23.2's ids: ab, ., a (the regex "." would give a, b, ., a).
  EXPECT_THAT(Ids(kSplitString, "ab.a"), ElementsAre(9, 3, 0));
}

TEST(HfTokenizerSplit, BackslashSIsOnigurumasWhitespaceWithVerticalTabAndNextLine) {
  // Hugging Face tokenizers 0.23.2's ids: U+000B, U+0085, space, tab and U+3000 are all removed.
  EXPECT_THAT(Ids(kSplitWhitespace, "a\vb\xC2\x85" "a b\ta"), ElementsAre(1, 2, 1, 2, 1));
  EXPECT_THAT(Ids(kSplitWhitespace, "a\xE3\x80\x80" "b"), ElementsAre(1, 2));
  // Hugging Face tokenizers 0.23.2's ids: \S+ removed leaves U+000B, space, U+0085.
  EXPECT_THAT(Ids(kSplitNonWhitespace, "a\va a\xC2\x85" "a"), ElementsAre(3, 2, 4));
  EXPECT_EQ(TranslateOnigurumaPattern(R"(\s+\S|\\s)"), R"(\p{White_Space}+\P{White_Space}|\\s)");
}

TEST(HfTokenizerDigits, RunsOfNumericCharactersStayTogether) {
  // Hugging Face tokenizers 0.23.2's ids: "12٣" (Arabic-Indic three) is one piece; "²" (No) and "Ⅷ" (Nl)
  // are cut from the letter.
  EXPECT_THAT(Ids(kDigitsRuns, "a12٣"), ElementsAre(0, 5));
  EXPECT_THAT(Ids(kDigitsRuns, "a1"), ElementsAre(0, 1));
  EXPECT_THAT(Ids(kDigitsRuns, "a²"), ElementsAre(0, 7));
  EXPECT_THAT(Ids(kDigitsRuns, "aⅧ"), ElementsAre(0, 9));
}

TEST(HfTokenizerDigits, IndividualDigitsCutsEveryNumericCharacter) {
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(Ids(kDigitsIndividual, "a12٣"), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(Ids(kDigitsIndividual, "a²"), ElementsAre(0, 7));
  EXPECT_THAT(Ids(kDigitsIndividual, "aⅧ"), ElementsAre(0, 9));
}

TEST(HfTokenizerByteLevel, Gpt2PatternSplitsBeforeTheBytesAreMapped) {
  // Hugging Face tokenizers 0.23.2's ids: ab, Ġab; b, Ġa; "é" is Ã©; ab, Ġ, Ġab.
  EXPECT_THAT(Ids(kByteLevel, "ab ab"), ElementsAre(3, 4));
  EXPECT_THAT(Ids(kByteLevel, "b a"), ElementsAre(1, 6));
  EXPECT_THAT(Ids(kByteLevel, "\xC3\xA9"), ElementsAre(9));
  EXPECT_THAT(Ids(kByteLevel, "ab  ab"), ElementsAre(3, 2, 4));
}

TEST(HfTokenizerByteLevel, AddPrefixSpaceAddsASpaceWhereThereIsNone) {
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(Ids(kByteLevelPrefixSpace, "ab ab"), ElementsAre(4, 4));
  EXPECT_THAT(Ids(kByteLevelPrefixSpace, " ab"), ElementsAre(4));
  EXPECT_THAT(Ids(kByteLevelPrefixSpace, "b a"), ElementsAre(2, 1, 6));
}

TEST(HfTokenizerByteLevel, WithoutUseRegexThePieceIsMergedWhole) {
  // Hugging Face tokenizers 0.23.2's ids: "b a" is bĠ, a.
  EXPECT_THAT(Ids(kByteLevelNoRegex, "b a"), ElementsAre(5, 0));
  EXPECT_THAT(Ids(kByteLevelNoRegex, "ab ab"), ElementsAre(3, 4));
}

TEST(HfTokenizerByteLevel, AddPrefixSpaceAfterASplitPrefixesEveryPiece) {
  // Hugging Face tokenizers 0.23.2's ids: "ab", " ", "ab" each get a space: Ġab, Ġ Ġ, Ġab.
  EXPECT_THAT(Ids(kSplitThenByteLevel, "ab ab"), ElementsAre(4, 2, 4));
  EXPECT_THAT(Ids(kSplitThenByteLevel, "b a"), ElementsAre(2, 1, 2, 6));
}

TEST(HfTokenizerMetaspace, AlwaysPrependsToEverySegmentAndSplitsBeforeEachMark) {
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(Ids(kMetaspaceAlways, "a b"), ElementsAre(3, 4));
  EXPECT_THAT(Ids(kMetaspaceAlways, " a"), ElementsAre(3));
  EXPECT_THAT(Ids(kMetaspaceAlways, "<x>a b"), ElementsAre(6, 3, 4));
  EXPECT_THAT(Ids(kMetaspaceAlways, "a<x>b a"), ElementsAre(3, 6, 4, 3));
}

TEST(HfTokenizerMetaspace, SplitFalseMergesTheSegmentWhole) {
  // Hugging Face tokenizers 0.23.2's ids: "▁a▁b" is one token.
  EXPECT_THAT(Ids(kMetaspaceNoSplit, "a b"), ElementsAre(5));
  EXPECT_THAT(Ids(kMetaspaceNoSplit, "a<x>b a"), ElementsAre(3, 6, 4, 3));
}

TEST(HfTokenizerMetaspace, FirstPrependsOnlyWhereTheInputStarts) {
  // Hugging Face tokenizers 0.23.2's ids: after an added token at the start, or in the middle, "b" gets
  // no mark.
  EXPECT_THAT(Ids(kMetaspaceFirst, "a b"), ElementsAre(3, 4));
  EXPECT_THAT(Ids(kMetaspaceFirst, "<x>a b"), ElementsAre(6, 1, 4));
  EXPECT_THAT(Ids(kMetaspaceFirst, "a<x>b a"), ElementsAre(3, 6, 2, 3));
}

TEST(HfTokenizerMetaspace, NeverPrepends) {
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(Ids(kMetaspaceNever, "a b"), ElementsAre(1, 4));
  EXPECT_THAT(Ids(kMetaspaceNever, "a<x>b a"), ElementsAre(1, 6, 2, 3));
}

// ---- normalizers ----

TEST(HfTokenizerNormalizer, NfcComposes) {
  // Hugging Face tokenizers 0.23.2's ids: "e" + U+0301 is "é" with NFC, two tokens without.
  EXPECT_THAT(Ids(kNfc, "e\xCC\x81" "x"), ElementsAre(2, 3));
  EXPECT_THAT(Ids(kNfc, "\xC3\xA9"), ElementsAre(2));
  EXPECT_THAT(Ids(kNoNormalizer, "e\xCC\x81" "x"), ElementsAre(0, 1, 3));
}

TEST(HfTokenizerNormalizer, NfkcFoldsCompatibilityCharacters) {
  // Hugging Face tokenizers 0.23.2's ids: "ﬁ①x" is "fi1x".
  EXPECT_THAT(Ids(kNfkc, "ﬁ①x"), ElementsAre(2, 3, 4));
}

TEST(HfTokenizerNormalizer, PrependIsAppliedToEachSegmentBetweenAddedTokens) {
  // Hugging Face tokenizers 0.23.2's ids: "a", "b a" each get "▁" ("<x>" is matched in the raw text).
  EXPECT_THAT(Ids(kPrependReplace, "a<x>b a"), ElementsAre(3, 6, 4, 3));
  EXPECT_THAT(Ids(kPrependReplace, "a b"), ElementsAre(3, 4));
  EXPECT_THAT(Ids(kPrependReplace, "<x>a"), ElementsAre(6, 3));
  EXPECT_THAT(Ids(kPrependReplace, "a<x>"), ElementsAre(3, 6));
}

TEST(HfTokenizerNormalizer, ReplaceReplacesNonOverlappingOccurrencesOnce) {
  // Hugging Face tokenizers 0.23.2's ids: "aab" is "ab" (not replaced again), "abab" is "bb".
  EXPECT_THAT(Ids(kReplace, "aab"), ElementsAre(0, 1));
  EXPECT_THAT(Ids(kReplace, "abab"), ElementsAre(2));
}

// ---- added tokens ----

TEST(HfTokenizerAddedTokens, LeftmostLongestMatchWins) {
  // Hugging Face tokenizers 0.23.2's ids: "abc" over "ab" at the same start, then "bcd" after x.
  EXPECT_THAT(Ids(kAdded, "abcd"), ElementsAre(14, 3));
  EXPECT_THAT(Ids(kAdded, "xbcd"), ElementsAre(7, 15));
}

TEST(HfTokenizerAddedTokens, LstripTakesTheWhitespaceBefore) {
  // Hugging Face tokenizers 0.23.2's ids: both spaces go with "[L]".
  EXPECT_THAT(Ids(kAdded, "a  [L]b"), ElementsAre(0, 16, 1));
}

TEST(HfTokenizerAddedTokens, RstripTakesTheWhitespaceAfter) {
  // Hugging Face tokenizers 0.23.2's ids: both spaces go with "[R]"; between "[R]" and "[L]" the space
  // is taken by "[R]".
  EXPECT_THAT(Ids(kAdded, "a[R]  b"), ElementsAre(0, 17, 1));
  EXPECT_THAT(Ids(kAdded, "ab[R] [L]a"), ElementsAre(13, 17, 16, 0));
}

TEST(HfTokenizerAddedTokens, SingleWordNeedsNoWordCharacterOnEitherSide) {
  // Hugging Face tokenizers 0.23.2's ids: "cd" matches alone, between "-", spaces or U+3000; not after
  // x, é or _ or before x.
  EXPECT_THAT(Ids(kAdded, "cd"), ElementsAre(18));
  EXPECT_THAT(Ids(kAdded, "-cd-"), ElementsAre(5, 18, 5));
  EXPECT_THAT(Ids(kAdded, " cd "), ElementsAre(4, 18, 4));
  EXPECT_THAT(Ids(kAdded, "\xE3\x80\x80" "cd"), ElementsAre(12, 18));
  EXPECT_THAT(Ids(kAdded, "xcd"), ElementsAre(7, 2, 3));
  EXPECT_THAT(Ids(kAdded, "cdx"), ElementsAre(2, 3, 7));
  EXPECT_THAT(Ids(kAdded, "\xC3\xA9" "cd"), ElementsAre(6, 2, 3));
  EXPECT_THAT(Ids(kAdded, "_cd"), ElementsAre(8, 2, 3));
}

TEST(HfTokenizerAddedTokens, SpecialTokensAreNeverMatchedInText) {
  // Hugging Face tokenizers 0.23.2's ids (its special token made unmatchable): "<s>" is <, s, >.
  EXPECT_THAT(Ids(kAdded, "a<s>b"), ElementsAre(0, 9, 10, 11, 1));
  EXPECT_THAT(Ids(kAdded, "ab<s>"), ElementsAre(13, 9, 10, 11));
  EXPECT_THAT(Ids(kTemplate, "a<s>b</s>", true), ElementsAre(0, 2, 4, 5, 6, 3, 4, 7, 5, 6, 1));
}

TEST(HfTokenizerAddedTokens, NormalizedTokensAreMatchedInTheNormalizedText) {
  // Hugging Face tokenizers 0.23.2's ids: "x y" (normalized) matches "x y" and "x▁y"; "z w" (not
  // normalized) matches "z w" only.
  EXPECT_THAT(Ids(kAddedNormalized, "x y"), ElementsAre(5));
  EXPECT_THAT(Ids(kAddedNormalized, "x▁y"), ElementsAre(5));
  EXPECT_THAT(Ids(kAddedNormalized, "z w"), ElementsAre(6));
  EXPECT_THAT(Ids(kAddedNormalized, "z▁w"), ElementsAre(2, 4, 3));
  EXPECT_THAT(Ids(kAddedNormalized, "ax yz wa"), ElementsAre(5, 6));
}

TEST(HfTokenizerAddedTokens, ANormalizedTokenIsMatchedInItsNormalizedFormPrependIncluded) {
  // Hugging Face tokenizers 0.23.2's ids: "x y" is sought as "▁x▁y", so "zx y" ("▁zx▁y") has none.
  EXPECT_THAT(Ids(kAddedNormalizedPrepend, "x y"), ElementsAre(5));
  EXPECT_THAT(Ids(kAddedNormalizedPrepend, "x▁y"), ElementsAre(5));
  EXPECT_THAT(Ids(kAddedNormalizedPrepend, "zx y"), ElementsAre(4, 2, 0, 4, 1));
  EXPECT_THAT(Ids(kAddedNormalizedPrepend, "z w"), ElementsAre(6));
}

TEST(HfTokenizerTemplate, AddSpecialTokensPutsThePrefixAndSuffixAround) {
  // Hugging Face tokenizers 0.23.2's ids: <s> ab </s> with add_special_tokens, ab without.
  EXPECT_THAT(Ids(kTemplate, "ab", true), ElementsAre(0, 8, 1));
  EXPECT_THAT(Ids(kTemplate, "ab", false), ElementsAre(8));
}

TEST(HfTokenizerTemplate, EmptyTextIsTheTemplateAlone) {
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(Ids(kTemplate, "", true), ElementsAre(0, 1));
  EXPECT_THAT(Ids(kTemplate, "", false), IsEmpty());
  EXPECT_THAT(Ids(kSentencePieceWords, "", true), ElementsAre(1));
  EXPECT_THAT(Ids(kAdded, ""), IsEmpty());
}

// ---- SentencePiece-style word cuts ----

TEST(HfTokenizerWords, AVocabularyWhoseMarksOnlyLeadTokensIsCutIntoWords) {
  const std::unique_ptr<HfTokenizer> tokenizer = Load(kSentencePieceWords);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_TRUE(tokenizer->splits_words());
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(Ids(kSentencePieceWords, "ab  ba c!", true), ElementsAre(1, 10, 3, 8, 4, 13, 2));
  EXPECT_THAT(Ids(kSentencePieceWords, "ca b", true), ElementsAre(1, 13, 4, 8));
  EXPECT_THAT(Ids(kSentencePieceWords, "ab ab", true), ElementsAre(1, 10, 10));
  EXPECT_THAT(Ids(kSentencePieceWords, "  a", true), ElementsAre(1, 11, 7));
}

TEST(HfTokenizerWords, ATokenWithAMarkAfterOtherTextKeepsTheTextWhole) {
  const std::unique_ptr<HfTokenizer> tokenizer = Load(kSentencePieceJoined);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_FALSE(tokenizer->splits_words());
  // Hugging Face tokenizers 0.23.2's ids: "ca b" ends in "a▁b", which spans two words.
  EXPECT_THAT(Ids(kSentencePieceJoined, "ca b", true), ElementsAre(1, 13, 14));
  EXPECT_THAT(Ids(kSentencePieceJoined, "ab  ba c!", true), ElementsAre(1, 10, 3, 8, 4, 13, 2));
  EXPECT_THAT(Ids(kSentencePieceJoined, "ab ab", true), ElementsAre(1, 10, 10));
  EXPECT_THAT(Ids(kSentencePieceJoined, "  a", true), ElementsAre(1, 11, 7));
}

TEST(HfTokenizerWords, ASessionGivesTheSameIdsFromItsPieceCache) {
  const std::unique_ptr<HfTokenizer> tokenizer = Load(kSentencePieceWords);
  ASSERT_NE(tokenizer, nullptr);
  const std::unique_ptr<HfTokenizer::Session> session = tokenizer->NewSession();
  std::vector<int32_t> first, second;
  ASSERT_TRUE(tokenizer->Encode("ab  ba c! ab", true, *session, &first).ok());
  ASSERT_TRUE(tokenizer->Encode("ab  ba c! ab", true, *session, &second).ok());
  EXPECT_EQ(first, second);
  // Hugging Face tokenizers 0.23.2's ids.
  EXPECT_THAT(first, ElementsAre(1, 10, 3, 8, 4, 13, 2, 10));
}

// ---- byte lengths ----

TEST(HfTokenizerByteLengths, ByteLevelCharactersCountOneByteEach) {
  const std::unique_ptr<HfTokenizer> tokenizer = Load(kByteLevelLengths);
  ASSERT_NE(tokenizer, nullptr);
  // a, Ġab, Ã©, ðŁĺĢ, Ċ, <|end|> (special), <x>.
  EXPECT_THAT(tokenizer->TokenByteLengths(), ElementsAre(1, 3, 2, 4, 1, 0, 3));
}

TEST(HfTokenizerByteLengths, SentencePieceMarksAndByteTokensCountOneByte) {
  const std::unique_ptr<HfTokenizer> tokenizer = Load(kSentencePieceLengths);
  ASSERT_NE(tokenizer, nullptr);
  // <unk>, <s> (special), <0xE9>, ▁, ▁▁, é, ▁abé, (no id 7), a.
  EXPECT_THAT(tokenizer->TokenByteLengths(), ElementsAre(0, 0, 1, 1, 2, 2, 5, 0, 1));
}

// ---- errors ----

TEST(HfTokenizerErrors, AnUnsupportedNormalizerIsNamedWithItsPath) {
  const Status status = LoadError(R"json({
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]},
    "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})json");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'normalizer.normalizers[1].type': 'Lowercase' is not supported"));
}

TEST(HfTokenizerErrors, AnUnsupportedPreTokenizerIsNamedWithItsPath) {
  const Status status = LoadError(R"json({
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}]},
    "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})json");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'pre_tokenizer.pretokenizers[0].type': 'Whitespace' is not supported"));
}

TEST(HfTokenizerErrors, AnUnsupportedModelIsNamedWithItsPath) {
  const Status status = LoadError(R"json({
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1}}})json");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'model.type': 'WordPiece' is not supported"));
}

TEST(HfTokenizerErrors, APatternIcuCannotCompileIsRefused) {
  const Status status = LoadError(R"json({
    "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": false},
    "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})json");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("t/tokenizer.json: pre-tokenizer step 0: pattern (a does not compile"));
}

TEST(HfTokenizerErrors, ANestedSequenceDeeperThanThirtyTwoIsRefusedNotRecursedInto) {
  std::string pre = R"({"type": "Digits", "individual_digits": true})";
  for (int depth = 0; depth < 5000; ++depth) pre = R"({"type": "Sequence", "pretokenizers": [)" + pre + "]}";
  const Status status = LoadError(R"({"pre_tokenizer": )" + pre + R"(, "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("Sequences nested more than 32 deep"));
}

TEST(HfTokenizerErrors, AnIdFarPastTheVocabularyIsRefusedNotAllocated) {
  const Status status = LoadError(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 2147483647}, "merges": []}})");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("the largest id, 2147483647, lies more than 65536 past the 2 ids"));
}

TEST(HfTokenizerErrors, EmptyPatternsAndLongMetaspaceReplacementsAreRefusedAtTheirKeys) {
  EXPECT_THAT(LoadError(R"({"pre_tokenizer": {"type": "Split", "pattern": {"String": ""}, "behavior": "Isolated"},
                            "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})").message(),
              HasSubstr("key 'pre_tokenizer.pattern': an empty pattern is not supported"));
  EXPECT_THAT(LoadError(R"({"normalizer": {"type": "Replace", "pattern": {"String": ""}, "content": "x"},
                            "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})").message(),
              HasSubstr("key 'normalizer.pattern': an empty pattern is not supported"));
  EXPECT_THAT(LoadError(R"({"pre_tokenizer": {"type": "Metaspace", "replacement": "__"},
                            "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})").message(),
              HasSubstr("key 'replacement': \"__\" is not one character"));
}

// A pattern that backtracks once per character, over a word of 1,000,000 letters: ICU's default 8 MB
// backtracking stack would overflow; the library (Oniguruma, no cap) encodes it, and so does rung.
TEST(HfTokenizerSplit, ALongWordUnderAPatternThatBacktracksPerCharacterIsEncoded) {
  const std::unique_ptr<HfTokenizer> tokenizer = Load(R"json({
    "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?:\\p{Lu}|\\p{Ll})+"}, "behavior": "Isolated"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})json");
  ASSERT_NE(tokenizer, nullptr);
  std::string word;
  for (int i = 0; i < 500000; ++i) word += "ab";
  std::vector<int32_t> ids;
  const Status status = tokenizer->Encode(word, false, *tokenizer->NewSession(), &ids);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ids.size(), word.size());
}

// The library's encode_special_tokens matches a special token and then leaves it as text, so a
// non-special added token inside it is not found (added_vocabulary.rs, find_matches).
TEST(HfTokenizerAddedTokens, ASpecialTokensTextHidesTheNonSpecialTokensInsideIt) {
  const std::unique_ptr<HfTokenizer> tokenizer = Load(R"json({
    "added_tokens": [
      {"id": 6, "content": "<ab>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
      {"id": 7, "content": "ab", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}],
    "model": {"type": "BPE", "vocab": {"x": 0, "<": 1, "a": 2, "b": 3, ">": 4, "y": 5}, "merges": []}})json");
  ASSERT_NE(tokenizer, nullptr);
  std::vector<int32_t> ids;
  ASSERT_TRUE(tokenizer->Encode("x<ab>y ab", false, *tokenizer->NewSession(), &ids).ok());
  // " " is outside the vocabulary and there is no unknown token: it is dropped.
  EXPECT_THAT(ids, ElementsAre(0, 1, 2, 3, 4, 5, 7));
}

}  // namespace
}  // namespace rung::hf::hf_tokenizer_test
