// Probes scored on models (core/train/probe_evaluation.h, Evaluator::Probe): a model built to answer
// a template probe (the hand-set induction model) answers every prompt, a random one next to none;
// paper 003's indexing probe on a model built to answer it and one built to confuse positions
// (tests/core/model/indexing_model.h), each scored exactly as its construction predicts.
#include "core/train/probe_evaluation.h"

#include <cmath>

#include <gtest/gtest.h>

#include "core/probes/indexing_prompts.h"
#include "core/train/evaluation.h"
#include "tests/core/model/indexing_model.h"
#include "tests/core/model/induction_model.h"

namespace rung {
namespace {

constexpr int64_t kMaxLength = 260;

// A template the induction model answers: the key follows the only '#' before the query's '#'.
TrialConfig CopyProbeTrial() {
  TrialConfig trial = testing_models::InductionTrialConfig(kMaxLength);
  trial.train.steps = 0;
  trial.train.init.checkpoint = "(set by hand)";
  ProbeConfig& probe = trial.train.probe;
  probe.kind = "template";
  probe.prefix = "Remember:";
  probe.needle = " #{key}";
  probe.query = " now #";
  probe.answer = "{key}";
  probe.filler_text = " the quick brown fox jumps over a lazy dog.";
  probe.key_digits = 2;  // two decode steps: X1 then X2 (the model copies where X1 occurs once)
  probe.instances = 6;
  probe.lengths = {64, 128, 256};
  return trial;
}

std::vector<records::ProbeResult> Score(const TrialConfig& trial, Transformer& model) {
  const StatusOr<std::unique_ptr<PreparedProbe>> prepared = PrepareProbe(trial);
  EXPECT_TRUE(prepared.ok()) << prepared.status().message();
  if (!prepared.ok()) return {};
  EXPECT_EQ((*prepared)->tokenizer, "bytes");
  StatusOr<std::unique_ptr<BatchSource>> source = MakeBatchSource(trial.data, trial.seed);
  EXPECT_TRUE(source.ok()) << source.status().message();
  Evaluator evaluator(trial, torch::kCPU, **source, model);
  return evaluator.Probe(**prepared);
}

TEST(ProbeEvaluation, AModelBuiltToAnswerATemplateProbeAnswersEveryPromptByGreedyDecoding) {
  const TrialConfig trial = CopyProbeTrial();
  Transformer model = testing_models::MakeInductionModel(kMaxLength);
  const std::vector<records::ProbeResult> cells = Score(trial, model);
  ASSERT_EQ(cells.size(), 3u * 5u);  // lengths x the default depths
  for (const records::ProbeResult& cell : cells) {
    EXPECT_EQ(cell.method, "none");
    EXPECT_EQ(cell.score, "decode");
    EXPECT_EQ(cell.instances, 6);
    EXPECT_EQ(cell.correct, 6) << "length " << cell.length << " depth " << cell.depth;
    EXPECT_DOUBLE_EQ(cell.accuracy, 1.0);
  }
}

TEST(ProbeEvaluation, ARandomModelOfTheSameShapeAnswersNearChance) {
  TrialConfig trial = CopyProbeTrial();
  trial.train.probe.score = "next_token";
  torch::manual_seed(11);
  Transformer model(testing_models::InductionModelConfig(kMaxLength));
  int64_t correct = 0, instances = 0;
  for (const records::ProbeResult& cell : Score(trial, model)) {
    correct += cell.correct;
    instances += cell.instances;
  }
  ASSERT_EQ(instances, 90);
  // Chance for the first digit of a key is 1 in 9 at best (a model that only ever says one digit).
  EXPECT_LE(correct, 10);
}

TEST(ProbeEvaluation, APromptLengthThatCannotHoldTheTextsIsRefusedBeforeAnythingRuns) {
  TrialConfig trial = CopyProbeTrial();
  trial.train.probe.lengths = {12};
  const StatusOr<std::unique_ptr<PreparedProbe>> prepared = PrepareProbe(trial);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("train.probe.lengths: 12 tokens cannot hold"), std::string::npos)
      << prepared.status().message();
}

TEST(ProbeEvaluation, AnAbsoluteTableThatRefusesLongerSequencesMustHoldThePromptAndItsAnswer) {
  TrialConfig trial = CopyProbeTrial();
  trial.train.probe.lengths = {64, kMaxLength};  // the answer's second token would fall past the table
  const StatusOr<std::unique_ptr<PreparedProbe>> prepared = PrepareProbe(trial);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("position.variant absolute has 260"), std::string::npos)
      << prepared.status().message();
}

TEST(ProbeEvaluation, ASyntheticTaskHasNoTextToHideANeedleIn) {
  TrialConfig trial = CopyProbeTrial();
  trial.train.probe.filler = "data";
  trial.data.source = "nrw";
  const StatusOr<std::unique_ptr<PreparedProbe>> prepared = PrepareProbe(trial);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("train.probe"), std::string::npos) << prepared.status().message();
}

constexpr int64_t kIndexingLength = 512;

// What the hand-set indexing model answers for each prompt (its header): arr[(k mod 10) XOR flip].
// Per list length, the count it gets right and each list's share.
struct Predicted {
  int64_t correct = 0;
  std::vector<double> per_list;
  double mean_bytes = 0;
  double position_blind = 0;
};
Predicted PredictIndexingModel(int64_t elements, int flip) {
  Predicted predicted;
  for (int64_t list = 0; list < 10; ++list) {
    const std::vector<int> values = IndexingList(list, elements);
    int64_t right = 0;
    for (int64_t query = 0; query < 10; ++query) {
      const int64_t index = IndexingIndex(list, query, elements);
      const int64_t read = (index % 10) ^ flip;
      right += values[static_cast<size_t>(read)] == values[static_cast<size_t>(index)] ? 1 : 0;
      predicted.mean_bytes += static_cast<double>(IndexingPromptText(values, index).size()) / 100.0;
      predicted.position_blind += PositionBlindAccuracy(values, index) / 100.0;
    }
    predicted.correct += right;
    predicted.per_list.push_back(static_cast<double>(right) / 10.0);
  }
  return predicted;
}

double PopulationSd(const std::vector<double>& values) {
  double mean = 0, squares = 0;
  for (double value : values) mean += value / static_cast<double>(values.size());
  for (double value : values) squares += (value - mean) * (value - mean);
  return std::sqrt(squares / static_cast<double>(values.size()));
}

// Scores the model of `flip` on lists of 4, 8 and 64, expects each cell as predicted, returns them.
// `batch_size` 1 scores a few prompts a pass (a training batch's tokens), more splits a length's prompts.
std::vector<records::ProbeResult> ExpectIndexingCellsAsPredicted(const std::string& score, int flip,
                                                                 int64_t batch_size = 32) {
  TrialConfig trial = testing_models::IndexingTrialConfig(kIndexingLength, {4, 8, 64});
  trial.train.probe.score = score;
  trial.train.batch_size = batch_size;
  Transformer model = testing_models::MakeIndexingModel(kIndexingLength, flip);
  const std::vector<records::ProbeResult> cells = Score(trial, model);
  EXPECT_EQ(cells.size(), 3u);
  for (const records::ProbeResult& cell : cells) {
    if (!cell.elements.has_value()) {
      ADD_FAILURE() << "an indexing cell without its list length";
      continue;
    }
    const Predicted predicted = PredictIndexingModel(*cell.elements, flip);
    SCOPED_TRACE(score + ", flip " + std::to_string(flip) + ", " + std::to_string(*cell.elements) + " elements");
    EXPECT_EQ(cell.probe, "indexing");
    EXPECT_EQ(cell.method, "none");
    EXPECT_EQ(cell.score, score);
    EXPECT_EQ(cell.instances, 100);
    EXPECT_EQ(cell.lists, 10);
    EXPECT_EQ(cell.correct, predicted.correct);
    EXPECT_DOUBLE_EQ(cell.accuracy, static_cast<double>(predicted.correct) / 100.0);
    EXPECT_NEAR(*cell.accuracy_sd, PopulationSd(predicted.per_list), 1e-12);
    EXPECT_NEAR(*cell.mean_tokens, predicted.mean_bytes, 1e-9);  // bytes: a token per byte
    EXPECT_DOUBLE_EQ(*cell.chance, 0.25);
    EXPECT_NEAR(*cell.position_blind, predicted.position_blind, 1e-12);
    EXPECT_EQ(cell.depth, -1);
  }
  return cells;
}

TEST(ProbeEvaluation, AModelBuiltToIndexAnswersListsOfUpToTenAndBeyondOnlyWhereTheIndexsLastDigitAgrees) {
  const std::vector<records::ProbeResult> cells = ExpectIndexingCellsAsPredicted("choice", 0);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[0].correct, 100);  // 4 elements: every index one digit
  EXPECT_EQ(cells[1].correct, 100);
  EXPECT_LT(cells[2].accuracy, 0.6);  // 64: mostly two digits, read by the last
}

TEST(ProbeEvaluation, AModelBuiltToConfusePositionsAnswersTheNeighbourNearChance) {
  const std::vector<records::ProbeResult> cells = ExpectIndexingCellsAsPredicted("choice", 1);
  for (const records::ProbeResult& cell : cells) EXPECT_LT(cell.accuracy, 0.45) << *cell.elements;
}

TEST(ProbeEvaluation, IndexingScoredByTheNextTokenAgreesWithChoiceOnTheBuiltModels) {
  ExpectIndexingCellsAsPredicted("next_token", 0, 1);  // a pass of 512 tokens: 4 prompts of 117
  ExpectIndexingCellsAsPredicted("next_token", 1);
}

TEST(ProbeEvaluation, IndexingListsWhosePromptsExceedTheContextAreRefusedBeforeAnythingRuns) {
  TrialConfig trial = testing_models::IndexingTrialConfig(kIndexingLength, {4, 256});
  const StatusOr<std::unique_ptr<PreparedProbe>> prepared = PrepareProbe(trial);
  ASSERT_FALSE(prepared.ok());
  EXPECT_NE(prepared.status().message().find("lists of 256 elements make prompts of up to"), std::string::npos)
      << prepared.status().message();
}

}  // namespace
}  // namespace rung
