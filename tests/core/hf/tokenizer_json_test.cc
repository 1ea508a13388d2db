// tokenizer.json read for the two BPE families rung encodes (Llama 3's byte-level, Llama 2's
// SentencePiece-style), and what an encoder could not honour refused by name and path.
#include "core/hf/tokenizer_json.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung::hf {
namespace {

using ::testing::HasSubstr;

// Llama 3's shape, with a five-token vocabulary: a Split regex then ByteLevel without its own regex,
// ignore_merges, merges as pairs, BOS added by the template.
constexpr const char* kByteLevel = R"({
  "version": "1.0",
  "added_tokens": [{"id": 5, "content": "<|begin_of_text|>", "single_word": false, "lstrip": false, "rstrip": false,
                    "normalized": false, "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t)|\\p{L}+"}, "behavior": "Isolated", "invert": false},
    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
  "post_processor": {"type": "Sequence", "processors": [
    {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
    {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                                              {"Sequence": {"id": "A", "type_id": 0}}],
     "pair": [], "special_tokens": {}}]},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": true,
            "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3, "abc": 4},
            "merges": [["a", "b"], ["ab", "c"]]}
})";

// Llama 2's shape: Prepend and Replace normalizers, no pre-tokenizer, byte fallback, merges as "a b".
constexpr const char* kSentencePiece = R"({
  "added_tokens": [{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true}],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
  "pre_tokenizer": null,
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                               {"Sequence": {"id": "A", "type_id": 0}}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
            "vocab": {"<unk>": 0, "<s>": 1, "<0x41>": 2, "\u2581": 3, "h": 4, "\u2581h": 5},
            "merges": ["\u2581 h"]}
})";

TEST(TokenizerJson, Llama3sByteLevelShapeReadsItsStepsMergesAndTemplate) {
  StatusOr<TokenizerJson> tokenizer = ParseTokenizerJson(kByteLevel, "t/tokenizer.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  EXPECT_EQ(tokenizer->family, TokenizerFamily::kByteLevelBpe);
  EXPECT_TRUE(tokenizer->ignore_merges);
  EXPECT_EQ(tokenizer->vocab.at("abc"), 4);
  ASSERT_EQ(tokenizer->merges.size(), 2u);
  EXPECT_EQ(tokenizer->merges[1], (std::pair<std::string, std::string>{"ab", "c"}));
  ASSERT_EQ(tokenizer->pre_tokenizer.size(), 2u);
  EXPECT_EQ(tokenizer->pre_tokenizer[0].kind, PreTokenizerStep::Kind::kSplit);
  EXPECT_EQ(tokenizer->pre_tokenizer[0].pattern, "(?i:'s|'t)|\\p{L}+");
  EXPECT_TRUE(tokenizer->pre_tokenizer[0].pattern_is_regex);
  EXPECT_EQ(tokenizer->pre_tokenizer[1].kind, PreTokenizerStep::Kind::kByteLevel);
  EXPECT_FALSE(tokenizer->pre_tokenizer[1].use_regex);
  EXPECT_FALSE(tokenizer->pre_tokenizer[1].add_prefix_space);
  ASSERT_EQ(tokenizer->added_tokens.size(), 1u);
  EXPECT_TRUE(tokenizer->added_tokens[0].special);
  EXPECT_EQ(tokenizer->prefix_tokens, std::vector<std::string>{"<|begin_of_text|>"});
  EXPECT_TRUE(tokenizer->suffix_tokens.empty());
  EXPECT_EQ(tokenizer->vocab_size, 6);
}

TEST(TokenizerJson, Llama2sSentencePieceShapeReadsItsNormalizerAndByteFallback) {
  StatusOr<TokenizerJson> tokenizer = ParseTokenizerJson(kSentencePiece, "t/tokenizer.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  EXPECT_EQ(tokenizer->family, TokenizerFamily::kSentencePieceBpe);
  EXPECT_TRUE(tokenizer->byte_fallback);
  EXPECT_TRUE(tokenizer->fuse_unk);
  EXPECT_EQ(tokenizer->unk_token, "<unk>");
  ASSERT_EQ(tokenizer->normalizer.size(), 2u);
  EXPECT_EQ(tokenizer->normalizer[0].kind, NormalizerStep::Kind::kPrepend);
  EXPECT_EQ(tokenizer->normalizer[0].prepend, "\xE2\x96\x81");
  EXPECT_EQ(tokenizer->normalizer[1].pattern, " ");
  EXPECT_EQ(tokenizer->merges[0], (std::pair<std::string, std::string>{"\xE2\x96\x81", "h"}));
  EXPECT_EQ(tokenizer->prefix_tokens, std::vector<std::string>{"<s>"});
}

// The message ParseTokenizerJson gives `base` with its first `from` replaced by `to` (which it must refuse).
std::string Refused(std::string base, const std::string& from, const std::string& to) {
  const size_t at = base.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  base.replace(at, from.size(), to);
  StatusOr<TokenizerJson> tokenizer = ParseTokenizerJson(base, "t/tokenizer.json");
  EXPECT_FALSE(tokenizer.ok());
  return tokenizer.ok() ? "" : tokenizer.status().message();
}

TEST(TokenizerJson, WhatAnEncoderCouldNotHonourIsRefusedByNameAndPath) {
  EXPECT_THAT(Refused(kByteLevel, R"("type": "BPE")", R"("type": "Unigram")"),
              HasSubstr("t/tokenizer.json: key 'model.type': 'Unigram' is not supported (BPE)"));
  EXPECT_THAT(Refused(kByteLevel, R"({"type": "Split")", R"({"type": "BertPreTokenizer")"),
              HasSubstr("key 'pre_tokenizer.pretokenizers[0].type': 'BertPreTokenizer' is not supported"));
  EXPECT_THAT(Refused(kSentencePiece, R"({"type": "Prepend")", R"({"type": "Lowercase")"),
              HasSubstr("key 'normalizer.normalizers[0].type': 'Lowercase' is not supported"));
  EXPECT_THAT(Refused(kByteLevel, R"(["ab", "c"])", R"(["ab", "d"])"),
              HasSubstr("merge 1 [\"ab\",\"d\"]: \"d\" is not in the vocabulary"));
  EXPECT_THAT(Refused(kSentencePiece, R"("\u2581 h")", R"("\u2581h")"), HasSubstr("is not \"a b\""));
  EXPECT_THAT(Refused(kByteLevel, R"("c": 3)", R"("c": 2)"), HasSubstr("id 2 is given to two tokens"));
  EXPECT_THAT(Refused(kByteLevel, R"("dropout": null)", R"("dropout": 0.1)"), HasSubstr("BPE dropout"));
  EXPECT_THAT(Refused(kByteLevel, R"({"id": 5, "content")", R"({"id": 4, "content")"),
              HasSubstr("key 'id': 4 for \"<|begin_of_text|>\" is not the id Hugging Face tokenizers gives it (5"));
  EXPECT_THAT(Refused(kSentencePiece, R"("unk_token": "<unk>")", R"("unk_token": "<missing>")"),
              HasSubstr("key 'unk_token': \"<missing>\" is not in the vocabulary"));
  EXPECT_THAT(Refused(kByteLevel, R"("version": "1.0",)", R"("version": "1.0",,)"), HasSubstr("not valid JSON"));
  // A number past a double's range: nlohmann throws out_of_range there, not parse_error (it terminated
  // rung-data; fuzz/regressions/hf_tokenizer/number-overflow).
  EXPECT_THAT(Refused(kByteLevel, R"("dropout": null)", R"("dropout": 1e400)"),
              HasSubstr("t/tokenizer.json: not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e400'"));
}

}  // namespace
}  // namespace rung::hf
