// The probes' prompts (core/probes/): texts, keys, assembly by length and depth, summaries.
#include "core/probes/probe_prompts.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/probes/probe_template.h"
#include "core/records/trainer_records.h"

namespace rung {
namespace {

StatusOr<std::vector<std::vector<int32_t>>> ByteIds(const std::vector<std::string>& texts, bool) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& text : texts) ids.emplace_back(text.begin(), text.end());
  return ids;
}

std::string Text(const std::vector<int32_t>& ids) { return std::string(ids.begin(), ids.end()); }

ProbeConfig Passkey() {
  ProbeConfig probe;
  probe.kind = "passkey";
  probe.instances = 4;
  return probe;
}

TEST(ProbePrompts, APasskeyPromptHasTheAskedLengthAndHidesItsKeyAtItsDepth) {
  const ProbeConfig probe = Passkey();
  const StatusOr<ProbeTokens> tokens = EncodeProbe(probe, ByteIds, "");
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  const ProbeInstanceFacts facts = ProbeInstance(probe, 2);
  ASSERT_EQ(facts.key.size(), 5u);
  EXPECT_NE(facts.key[0], '0');
  int64_t previous = -1;
  for (double depth : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    const StatusOr<ProbePrompt> prompt = BuildProbePrompt(*tokens, 600, depth, 2, nullptr);
    ASSERT_TRUE(prompt.ok()) << prompt.status().message();
    ASSERT_EQ(prompt->tokens.size(), 600u);
    const std::string text = Text(prompt->tokens);
    EXPECT_EQ(text.rfind("There is an important info hidden", 0), 0u) << text;
    const std::string needle = " The pass key is " + facts.key + ". Remember it. " + facts.key + " is the pass key.";
    EXPECT_EQ(text.substr(static_cast<size_t>(prompt->needle_start), needle.size()), needle);
    EXPECT_GT(prompt->needle_start, previous);  // deeper needles start later
    previous = prompt->needle_start;
    EXPECT_EQ(text.substr(text.size() - 38), " What is the pass key? The pass key is");
    EXPECT_EQ(Text(prompt->answer), " " + facts.key);
  }
  // Depth 0 is right after the prefix, depth 1 right before the query.
  const ProbePrompt first = BuildProbePrompt(*tokens, 600, 0.0, 2, nullptr).value();
  EXPECT_EQ(first.needle_start, static_cast<int64_t>(tokens->prefix.size()));
  const ProbePrompt last = BuildProbePrompt(*tokens, 600, 1.0, 2, nullptr).value();
  EXPECT_EQ(last.needle_start + static_cast<int64_t>(tokens->instances[2].needle.size()),
            600 - static_cast<int64_t>(tokens->instances[2].query.size()));
}

TEST(ProbePrompts, TheAnswerTokensEveryInstanceSharesAreCounted) {
  // Bytes: every passkey answer starts with " " and then differs (keys start with 1-9).
  const ProbeTokens tokens = EncodeProbe(Passkey(), ByteIds, "").value();
  EXPECT_EQ(tokens.answer_shared, 1);
  EXPECT_EQ(tokens.LongestAnswer(), 6);
  ProbeConfig one = Passkey();
  one.instances = 1;  // a lone answer shares all but its last token with itself
  EXPECT_EQ(EncodeProbe(one, ByteIds, "").value().answer_shared, 5);
}

TEST(ProbePrompts, AnInstanceKeepsItsKeyInEveryCellAndInstancesDiffer) {
  const ProbeConfig probe = Passkey();
  std::set<std::string> keys;
  for (int64_t i = 0; i < 16; ++i) keys.insert(ProbeInstance(probe, i).key);
  EXPECT_GE(keys.size(), 15u);
  EXPECT_EQ(ProbeInstance(probe, 3).key, ProbeInstance(probe, 3).key);
}

TEST(ProbePrompts, NiahHidesDistinctlyNamedDistractorsBesideTheNeedleAndAsksForTheNeedlesName) {
  ProbeConfig probe;
  probe.kind = "niah";
  probe.instances = 2;
  probe.distractors = 3;
  probe.filler_text = " Filler words go here.";
  const ProbeTokens tokens = EncodeProbe(probe, ByteIds, "").value();
  const ProbeInstanceFacts facts = ProbeInstance(probe, 1);
  std::set<std::string> names = {facts.name};
  for (const std::string& name : facts.distractor_names) names.insert(name);
  EXPECT_EQ(names.size(), 4u);
  const ProbePrompt prompt = BuildProbePrompt(tokens, 1000, 0.5, 1, nullptr).value();
  const std::string text = Text(prompt.tokens);
  EXPECT_NE(text.find("One of the special magic numbers for " + facts.name + " is: " + facts.key + "."), std::string::npos);
  for (size_t d = 0; d < 3; ++d) {
    EXPECT_NE(text.find("for " + facts.distractor_names[d] + " is: " + facts.distractor_keys[d] + "."), std::string::npos);
  }
  EXPECT_NE(text.find("What is the special magic number for " + facts.name + " mentioned"), std::string::npos);
  EXPECT_EQ(Text(prompt.answer), " " + facts.key);
}

TEST(ProbePrompts, FillerFromASourceIsCutToTheLengthAndAFileStartsEachInstanceElsewhere) {
  ProbeConfig probe = Passkey();
  ProbeTokens tokens = EncodeProbe(probe, ByteIds, "").value();
  tokens.segment.clear();
  int64_t asked = -1;
  const ProbeFillerSource source = [&](int64_t, int64_t count) {
    asked = count;
    return std::vector<int32_t>(static_cast<size_t>(count), 'x');
  };
  const ProbePrompt prompt = BuildProbePrompt(tokens, 400, 0.5, 0, source).value();
  EXPECT_EQ(prompt.tokens.size(), 400u);
  EXPECT_EQ(asked, 400 - static_cast<int64_t>(tokens.prefix.size() + tokens.instances[0].needle.size() +
                                                tokens.instances[0].query.size()));
  const ProbeTokens from_file = EncodeProbe(probe, ByteIds, "abcdefghijklmnopqrstuvwxyz").value();
  EXPECT_EQ(Text(from_file.segment), "abcdefghijklmnopqrstuvwxyz");
  const std::string a = Text(BuildProbePrompt(from_file, 300, 1.0, 0, nullptr).value().tokens);
  const std::string b = Text(BuildProbePrompt(from_file, 300, 1.0, 1, nullptr).value().tokens);
  EXPECT_NE(a.substr(from_file.prefix.size(), 20), b.substr(from_file.prefix.size(), 20));
}

TEST(ProbePrompts, TheTemplatesBosComesFromTheTokenizersSpecialTokens) {
  const ProbeTextEncoder with_bos = [](const std::vector<std::string>& texts, bool special) {
    StatusOr<std::vector<std::vector<int32_t>>> ids = ByteIds(texts, special);
    if (special) {
      for (auto& row : *ids) row.insert(row.begin(), 1);
    }
    return ids;
  };
  const ProbeTokens tokens = EncodeProbe(Passkey(), with_bos, "").value();
  EXPECT_EQ(tokens.bos, std::vector<int32_t>{1});
  const ProbePrompt prompt = BuildProbePrompt(tokens, 500, 0.5, 0, nullptr).value();
  EXPECT_EQ(prompt.tokens.front(), 1);
  EXPECT_EQ(prompt.tokens.size(), 500u);
}

TEST(ProbePrompts, TheAnswerIsTheQuerysContinuationWhereTheTokenizerMergesAcrossTheBoundary) {
  // A tokenizer that merges " " + digit into one id (1000 + digit).
  const ProbeTextEncoder merging = [](const std::vector<std::string>& texts, bool) {
    std::vector<std::vector<int32_t>> ids;
    for (const std::string& text : texts) {
      std::vector<int32_t> row;
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == ' ' && i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9') {
          row.push_back(1000 + (text[i + 1] - '0'));
          ++i;
        } else {
          row.push_back(static_cast<unsigned char>(text[i]));
        }
      }
      ids.push_back(row);
    }
    return StatusOr<std::vector<std::vector<int32_t>>>(ids);
  };
  const ProbeTokens tokens = EncodeProbe(Passkey(), merging, "").value();
  const std::string key = ProbeInstance(Passkey(), 0).key;
  EXPECT_EQ(tokens.instances[0].answer.front(), 1000 + (key[0] - '0'));
  EXPECT_EQ(tokens.instances[0].answer.size(), key.size());
}

TEST(ProbePrompts, ALengthTooShortForTheTextsIsRefusedSayingWhatItNeeds) {
  const ProbeTokens tokens = EncodeProbe(Passkey(), ByteIds, "").value();
  const StatusOr<ProbePrompt> prompt = BuildProbePrompt(tokens, 100, 0.5, 0, nullptr);
  ASSERT_FALSE(prompt.ok());
  EXPECT_NE(prompt.status().message().find("need " + std::to_string(tokens.MinimumLength())), std::string::npos)
      << prompt.status().message();
}

TEST(ProbeSettings, LengthsWithinTheTrainingLengthUseNoExtensionAndBeyondItEachMethod) {
  ProbeConfig probe = Passkey();
  probe.lengths = {128, 256, 512};
  const std::vector<ProbeSetting> settings = ProbeSettings(probe, 256, {"none", "yarn"});
  ASSERT_EQ(settings.size(), 4u);
  EXPECT_EQ(settings[0].length, 128);
  EXPECT_EQ(settings[0].method, "none");
  EXPECT_EQ(settings[1].method, "none");
  EXPECT_EQ(settings[2].length, 512);
  EXPECT_EQ(settings[2].method, "none");
  EXPECT_EQ(settings[3].method, "yarn");
  probe.lengths.clear();
  ASSERT_EQ(ProbeSettings(probe, 256, {"yarn"}).size(), 1u);
  EXPECT_EQ(ProbeSettings(probe, 256, {"yarn"})[0].length, 256);
}

TEST(ProbeSummaries, AccuracyIsPooledOverDepthsPerLengthAndOverEverythingPerMethod) {
  std::vector<records::ProbeResult> cells;
  auto cell = [&](int64_t length, const std::string& method, int64_t correct, int64_t instances) {
    records::ProbeResult result;
    result.probe = "passkey";
    result.length = length;
    result.method = method;
    result.correct = correct;
    result.instances = instances;
    cells.push_back(result);
  };
  cell(128, "none", 4, 4);
  cell(128, "none", 2, 4);
  cell(512, "none", 0, 4);
  cell(512, "yarn", 3, 4);
  const auto summaries = records::ProbeSummaries(cells);
  std::map<std::string, double> by_name(summaries.begin(), summaries.end());
  EXPECT_DOUBLE_EQ(by_name.at("passkey_accuracy"), 6.0 / 12.0);
  EXPECT_DOUBLE_EQ(by_name.at("passkey_accuracy_128"), 6.0 / 8.0);
  EXPECT_DOUBLE_EQ(by_name.at("passkey_accuracy_512"), 0.0);
  EXPECT_DOUBLE_EQ(by_name.at("passkey_accuracy_yarn"), 0.75);
  EXPECT_DOUBLE_EQ(by_name.at("passkey_accuracy_512_yarn"), 0.75);
  EXPECT_EQ(summaries.front().first, "passkey_accuracy");
}

}  // namespace
}  // namespace rung
