// Paper 003's indexing prompts (core/probes/indexing_prompts.h): the text as the paper writes it, the
// lists and indices, the lengths kept within the context, and what choice scores among.
#include "core/probes/indexing_prompts.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace rung {
namespace {

StatusOr<std::vector<std::vector<int32_t>>> ByteIds(const std::vector<std::string>& texts, bool) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& text : texts) ids.emplace_back(text.begin(), text.end());
  return ids;
}

// A tokenizer with a BOS (id 1) and words ("arr", ",", " 3", ...) for ids: a stand-in only for how
// template tokens and answers in context are taken apart, its ids counted by bytes plus 300.
StatusOr<std::vector<std::vector<int32_t>>> BosBytes(const std::vector<std::string>& texts, bool special_tokens) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& text : texts) {
    std::vector<int32_t> row;
    if (special_tokens) row.push_back(1);
    for (unsigned char byte : text) row.push_back(300 + byte);
    ids.push_back(std::move(row));
  }
  return ids;
}

IndexingLimits Within(int64_t context) {
  IndexingLimits limits;
  limits.context = context;
  return limits;
}

ProbeConfig Indexing(std::vector<int64_t> elements) {
  ProbeConfig probe;
  probe.kind = "indexing";
  probe.elements = std::move(elements);
  probe.instances = 3;
  probe.queries = 4;
  return probe;
}

TEST(IndexingPrompts, ThePromptIsPaper003sTextWithTheListAsPythonWritesIt) {
  EXPECT_EQ(IndexingPromptText({2, 0, 3, 1}, 2),
            "arr = [2, 0, 3, 1]\nGiven the above array, don't think and directly answer the corresponding value "
            "concisely: arr[2] =");
  EXPECT_EQ(IndexingPromptText({1}, 0).substr(0, 10), "arr = [1]\n");
  EXPECT_EQ(IndexingAnswerText(3), " 3");
}

TEST(IndexingPrompts, ListsHoldValuesZeroToThreeAndIndicesFallInTheListAsPureFunctions) {
  std::set<int> seen;
  std::set<int64_t> indices;
  for (int64_t list = 0; list < 20; ++list) {
    const std::vector<int> values = IndexingList(list, 64);
    ASSERT_EQ(values.size(), 64u);
    EXPECT_EQ(values, IndexingList(list, 64));
    for (int value : values) {
      ASSERT_GE(value, 0);
      ASSERT_LT(value, 4);
      seen.insert(value);
    }
    for (int64_t query = 0; query < 10; ++query) {
      const int64_t index = IndexingIndex(list, query, 64);
      ASSERT_GE(index, 0);
      ASSERT_LT(index, 64);
      EXPECT_EQ(index, IndexingIndex(list, query, 64));
      indices.insert(index);
    }
  }
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_GT(indices.size(), 40u);  // 200 uniform draws of 64 leave few unseen
  EXPECT_NE(IndexingList(0, 64), IndexingList(1, 64));
}

TEST(IndexingPrompts, EachPromptIsEncodedWholeWithItsAnswerAfterIt) {
  const StatusOr<IndexingTokens> tokens = EncodeIndexingProbe(Indexing({4, 8}), ByteIds, Within(1024), "bytes");
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  ASSERT_EQ(tokens->lengths.size(), 2u);
  EXPECT_EQ(tokens->answer_shared, 1);  // " " before the digit
  EXPECT_EQ(tokens->candidates, (std::vector<int32_t>{'0', '1', '2', '3'}));
  for (const IndexingLength& length : tokens->lengths) {
    ASSERT_EQ(length.prompts.size(), 12u);  // 3 lists x 4 queries, list-major
    int64_t longest = 0;
    double total = 0;
    for (size_t p = 0; p < length.prompts.size(); ++p) {
      const int64_t list = static_cast<int64_t>(p) / 4, query = static_cast<int64_t>(p) % 4;
      const std::vector<int> values = IndexingList(list, length.elements);
      const int64_t index = IndexingIndex(list, query, length.elements);
      const IndexingPrompt& prompt = length.prompts[p];
      EXPECT_EQ(std::string(prompt.tokens.begin(), prompt.tokens.end()), IndexingPromptText(values, index));
      EXPECT_EQ(prompt.value, values[static_cast<size_t>(index)]);
      EXPECT_EQ(std::string(prompt.answer.begin(), prompt.answer.end()), IndexingAnswerText(prompt.value));
      longest = std::max<int64_t>(longest, static_cast<int64_t>(prompt.tokens.size()));
      total += static_cast<double>(prompt.tokens.size());
    }
    EXPECT_EQ(length.longest, longest);
    EXPECT_DOUBLE_EQ(length.mean_tokens, total / 12.0);
  }
}

TEST(IndexingPrompts, TheTokenizersTemplateTokensComeFirst) {
  const StatusOr<IndexingTokens> tokens = EncodeIndexingProbe(Indexing({4}), BosBytes, Within(1024), "stand-in");
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  const IndexingPrompt& prompt = tokens->lengths.front().prompts.front();
  EXPECT_EQ(prompt.tokens.front(), 1);
  EXPECT_EQ(prompt.tokens[1], 300 + 'a');
  EXPECT_EQ(prompt.answer.size(), 2u);
}

TEST(IndexingPrompts, TheDefaultLengthsArePaper003sPowersOfTwoThatFitTheContext) {
  ProbeConfig probe = Indexing({});
  EXPECT_EQ(IndexingElementCounts(probe),
            (std::vector<int64_t>{4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}));
  // As bytes a list of n takes 3n - 2 + 8 bytes and the text around it about 100: 32 fit 256, 64 do not.
  const StatusOr<IndexingTokens> tokens = EncodeIndexingProbe(probe, ByteIds, Within(256), "bytes");
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  std::vector<int64_t> kept;
  for (const IndexingLength& length : tokens->lengths) {
    kept.push_back(length.elements);
    EXPECT_LE(length.longest, 256);
  }
  EXPECT_EQ(kept, (std::vector<int64_t>{4, 8, 16, 32}));
}

TEST(IndexingPrompts, ThePositionBlindAccuracyIsTheListsModeSplitOverTies) {
  EXPECT_DOUBLE_EQ(PositionBlindAccuracy({2, 2, 0, 1}, 0), 1.0);  // 2 is the mode
  EXPECT_DOUBLE_EQ(PositionBlindAccuracy({2, 2, 0, 1}, 2), 0.0);
  EXPECT_DOUBLE_EQ(PositionBlindAccuracy({2, 2, 0, 0}, 2), 0.5);  // two modes
  EXPECT_DOUBLE_EQ(PositionBlindAccuracy({0, 1, 2, 3}, 3), 0.25);
  // Over every list of 4 values asked at every index it is the expected best position-blind score,
  // above the uniform guess's 1/4 and a random element's 1/4 + 3/16.
  double total = 0;
  for (int code = 0; code < 256; ++code) {
    const std::vector<int> values = {code & 3, (code >> 2) & 3, (code >> 4) & 3, (code >> 6) & 3};
    for (int64_t index = 0; index < 4; ++index) total += PositionBlindAccuracy(values, index);
  }
  EXPECT_GT(total / 1024.0, 0.25 + 3.0 / 16.0);
}

TEST(IndexingPrompts, TheDefaultsStopWhereTheAnswerFedAfterThePromptWouldPassTheModelsPositions) {
  IndexingLimits limits = Within(1024);
  // Lists of 4 make prompts of 117 bytes, of 8 of 129; choice feeds " " after them.
  limits.positions = 129;
  const StatusOr<IndexingTokens> tokens = EncodeIndexingProbe(Indexing({}), ByteIds, limits, "bytes");
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  ASSERT_EQ(tokens->lengths.size(), 1u);
  EXPECT_EQ(tokens->lengths.front().elements, 4);
  const StatusOr<IndexingTokens> given = EncodeIndexingProbe(Indexing({4, 8}), ByteIds, limits, "bytes");
  ASSERT_FALSE(given.ok());
  EXPECT_NE(given.status().message().find("positions the model has"), std::string::npos) << given.status().message();
}

TEST(IndexingPrompts, AGivenLengthBeyondTheContextIsRefusedWithItsTokens) {
  const StatusOr<IndexingTokens> tokens = EncodeIndexingProbe(Indexing({4, 64}), ByteIds, Within(256), "bytes");
  ASSERT_FALSE(tokens.ok());
  EXPECT_NE(tokens.status().message().find("train.probe.elements: lists of 64 elements make prompts of up to"),
            std::string::npos)
      << tokens.status().message();
  EXPECT_NE(tokens.status().message().find("more than data.seq_len 256"), std::string::npos) << tokens.status().message();
  const StatusOr<IndexingTokens> none = EncodeIndexingProbe(Indexing({}), ByteIds, Within(64), "bytes");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("data.seq_len 64"), std::string::npos) << none.status().message();
  // A list longer than twice the context is refused before any prompt is made.
  const StatusOr<IndexingTokens> huge = EncodeIndexingProbe(Indexing({4, 100000}), ByteIds, Within(256), "bytes");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("a list of 100000 elements cannot fit in data.seq_len 256"), std::string::npos)
      << huge.status().message();
}

TEST(IndexingPrompts, ChoiceIsRefusedWhereTheAnswersAreNotToldApartByOneToken) {
  // A tokenizer that codes every digit alike cannot tell the four answers apart.
  const ProbeTextEncoder same_digits = [](const std::vector<std::string>& texts, bool) {
    std::vector<std::vector<int32_t>> ids;
    for (const std::string& text : texts) {
      std::vector<int32_t> row;
      for (unsigned char byte : text) row.push_back(byte >= '0' && byte <= '9' ? '0' : byte);
      ids.push_back(std::move(row));
    }
    return StatusOr<std::vector<std::vector<int32_t>>>(ids);
  };
  ProbeConfig probe = Indexing({4});
  probe.score = "choice";
  const StatusOr<IndexingTokens> tokens = EncodeIndexingProbe(probe, same_digits, Within(1024), "digits-alike");
  ASSERT_FALSE(tokens.ok());
  EXPECT_NE(tokens.status().message().find("train.probe.score: choice"), std::string::npos) << tokens.status().message();
  probe.score = "decode";
  const StatusOr<IndexingTokens> decoded = EncodeIndexingProbe(probe, same_digits, Within(1024), "digits-alike");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_TRUE(decoded->candidates.empty());
}

}  // namespace
}  // namespace rung
