// The word cache of rung-data prepare: the same ids as encoding each document whole, for rung-data's own
// models, and a whole-document fallback for models whose pieces or normalizer could cross a word.
#include "tools/rung-data/word_cached_encoder.h"

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>
#include <sentencepiece_trainer.h>

#include "tests/core/data/test_files.h"
#include "tests/tools/vector_sentences.h"
#include "tools/rung-data/tokenizer.h"

namespace rung::data_tool {
namespace {

// Words with what a splitter could get wrong: runs of spaces, tabs and newlines, SentencePiece's own
// mark U+2581 as text, accents, CJK without spaces, punctuation, and a word longer than the cache keeps.
const std::vector<std::string>& Vocabulary() {
  static const std::vector<std::string> words = {
      "the", "of", "Elizabeth", "Darcy,", "said", "\"Indeed!\"", "\n", "\n\n", "\t", "  ", "   ", "caf\xC3\xA9",
      "na\xC3\xAFve", "\xE2\x96\x81", "a\xE2\x96\x81" "b", "\xE2\x96\x81\xE2\x96\x81x", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",
      "--", "1813", "(Mr.", "Bennet)", std::string(80, 'z') + "end", "ok\n  indented", "\xF0\x9F\x99\x82",
  };
  return words;
}

std::string RandomDocument(std::mt19937& random) {
  const std::vector<std::string>& words = Vocabulary();
  std::uniform_int_distribution<size_t> pick(0, words.size() - 1);
  std::uniform_int_distribution<int> length(0, 40), space(0, 5);
  std::string text;
  if (space(random) == 0) text += "  ";
  for (int w = length(random); w > 0; --w) {
    text += words[pick(random)];
    const int gap = space(random);
    text += gap == 0 ? "" : gap == 1 ? "  " : gap == 2 ? "\xE2\x96\x81" : gap == 3 ? " \xE2\x96\x81 " : " ";
  }
  return text;
}

std::string TrainingText() {
  std::mt19937 random(7);
  std::string text;
  for (int d = 0; d < 400; ++d) text += RandomDocument(random) + "\n";
  return text;
}

std::unique_ptr<Tokenizer> LoadModel(const data_test::TempFolder& folder, const std::string& model_bytes) {
  data_test::WriteBytes(folder / "tokenizer.model", model_bytes);
  auto loaded = Tokenizer::Load(folder / "tokenizer.model");
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? std::move(*loaded) : nullptr;
}

// A model trained by SentencePiece directly with `overrides` on rung-data's settings.
std::string TrainedWith(const std::unordered_map<std::string, std::string>& overrides) {
  std::unordered_map<std::string, std::string> arguments = {
      {"model_type", "bpe"}, {"vocab_size", "320"}, {"byte_fallback", "true"}, {"character_coverage", "1.0"},
      {"minloglevel", "2"}, {"num_threads", "1"},
  };
  for (const auto& [key, value] : overrides) arguments[key] = value;
  std::vector<std::string> lines;
  std::mt19937 random(11);
  for (int d = 0; d < 400; ++d) lines.push_back(RandomDocument(random));
  VectorSentences iterator(lines);
  std::string model;
  EXPECT_TRUE(sentencepiece::SentencePieceTrainer::Train(arguments, &iterator, &model).ok());
  return model;
}

// ids[from - 2, from + 6) for a failure message.
std::string Around(const std::vector<int>& ids, size_t from) {
  std::string text = "\n  ids from " + std::to_string(from < 2 ? 0 : from - 2) + ":";
  for (size_t i = from < 2 ? 0 : from - 2; i < ids.size() && i < from + 6; ++i) text += " " + std::to_string(ids[i]);
  return text;
}

void ExpectSameIdsAsWholeDocuments(const Tokenizer& tokenizer, WordCachedEncoder& encoder, int documents) {
  std::mt19937 random(2026);
  for (int d = 0; d < documents; ++d) {
    const std::string text = RandomDocument(random);
    std::vector<int> whole, by_words;
    ASSERT_TRUE(tokenizer.Encode(text, &whole).ok());
    ASSERT_TRUE(encoder.Encode(text, &by_words).ok());
    size_t first = 0;
    while (first < whole.size() && first < by_words.size() && whole[first] == by_words[first]) ++first;
    ASSERT_EQ(by_words, whole) << "document " << d << " differs from id " << first << ": '" << text << "'"
                               << Around(whole, first) << Around(by_words, first);
  }
}

// A model rung-data tokenizer train makes from TrainingText(), loaded from `folder`.
std::unique_ptr<Tokenizer> RungDataModel(const data_test::TempFolder& folder, const std::string& type,
                                         int64_t vocab_size) {
  TokenizerTrainOptions options;
  options.vocab_size = vocab_size;
  options.type = type;
  auto model = TrainTokenizer({TrainingText()}, options);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? LoadModel(folder, *model) : nullptr;
}

TEST(WordCachedEncoderTest, GivesTheIdsOfWholeDocumentsForRungDataBpeModels) {
  data_test::TempFolder folder;
  const std::unique_ptr<Tokenizer> tokenizer = RungDataModel(folder, "bpe", 400);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_TRUE(tokenizer->pieces_stay_within_words());
  WordCachedEncoder encoder(*tokenizer);
  ExpectSameIdsAsWholeDocuments(*tokenizer, encoder, 500);
  EXPECT_GT(encoder.hits(), encoder.misses()) << "repeated words are looked up, not encoded";
}

// Unigram segmentations of equal summed score tie-break with the rounding of the text before them.
TEST(WordCachedEncoderTest, EncodesWholeDocumentsForUnigramModels) {
  data_test::TempFolder folder;
  const std::unique_ptr<Tokenizer> tokenizer = RungDataModel(folder, "unigram", 320);
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_FALSE(tokenizer->pieces_stay_within_words());
  WordCachedEncoder encoder(*tokenizer);
  ExpectSameIdsAsWholeDocuments(*tokenizer, encoder, 200);
  EXPECT_EQ(encoder.hits() + encoder.misses(), 0u);
}

TEST(WordCachedEncoderTest, StaysExactWhenTheCacheFillsAndEmpties) {
  data_test::TempFolder folder;
  const std::unique_ptr<Tokenizer> tokenizer = RungDataModel(folder, "bpe", 400);
  ASSERT_NE(tokenizer, nullptr);
  WordCachedEncoder encoder(*tokenizer, /*max_words=*/3);
  ExpectSameIdsAsWholeDocuments(*tokenizer, encoder, 200);
}

TEST(WordCachedEncoderTest, EncodesWholeDocumentsWhenPiecesMaySpanWords) {
  data_test::TempFolder folder;
  const std::unique_ptr<Tokenizer> tokenizer =
      LoadModel(folder, TrainedWith({{"normalization_rule_name", "identity"}, {"add_dummy_prefix", "false"},
                                     {"remove_extra_whitespaces", "false"}, {"split_by_whitespace", "false"}}));
  ASSERT_NE(tokenizer, nullptr);
  EXPECT_FALSE(tokenizer->pieces_stay_within_words()) << "pieces such as 'e\xE2\x96\x81t' span a word start";
  WordCachedEncoder encoder(*tokenizer);
  ExpectSameIdsAsWholeDocuments(*tokenizer, encoder, 200);
  EXPECT_EQ(encoder.hits() + encoder.misses(), 0u);
}

TEST(WordCachedEncoderTest, EncodesWholeDocumentsWhenTheNormalizerChangesText) {
  int model = 0;
  for (const auto& overrides : std::vector<std::unordered_map<std::string, std::string>>{
           {},  // SentencePiece's defaults: NFKC, a dummy prefix, whitespace folded
           {{"normalization_rule_name", "identity"}, {"add_dummy_prefix", "true"}, {"remove_extra_whitespaces", "false"}},
           {{"normalization_rule_name", "identity"}, {"add_dummy_prefix", "false"}, {"remove_extra_whitespaces", "true"}},
           {{"normalization_rule_name", "nmt_nfkc"}, {"add_dummy_prefix", "false"}, {"remove_extra_whitespaces", "false"}},
       }) {
    SCOPED_TRACE("model " + std::to_string(model++));
    data_test::TempFolder folder;
    const std::unique_ptr<Tokenizer> tokenizer = LoadModel(folder, TrainedWith(overrides));
    ASSERT_NE(tokenizer, nullptr);
    EXPECT_FALSE(tokenizer->pieces_stay_within_words());
    WordCachedEncoder encoder(*tokenizer);
    ExpectSameIdsAsWholeDocuments(*tokenizer, encoder, 100);
  }
}

}  // namespace
}  // namespace rung::data_tool
