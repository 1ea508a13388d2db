// Probes scored on models (core/train/probe_evaluation.h, Evaluator::Probe): a model built to answer
// a template probe (the hand-set induction model) answers every prompt, a random one next to none.
#include "core/train/probe_evaluation.h"

#include <gtest/gtest.h>

#include "core/train/evaluation.h"
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

}  // namespace
}  // namespace rung
