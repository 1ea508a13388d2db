#include "core/data/synthetic_tasks.h"

#include <cmath>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "core/config/trial_config.h"

namespace rung {
namespace {

// A task at a length where every default setting fits: NRW's window moved to c = 100, W = 32, and
// enough NIAH keys for distinct keys (the defaults ask for 31 distractors).
DataConfig TaskConfig(const std::string& source, int64_t seq_len) {
  DataConfig config;
  config.source = source;
  config.seq_len = seq_len;
  config.nrw.window_centre = 100;
  config.nrw.window_width = 32;
  config.niah.key_symbols = 32;
  return config;
}

std::unique_ptr<SyntheticTask> CreateOrDie(const DataConfig& config, uint64_t seed = 5) {
  StatusOr<std::unique_ptr<SyntheticTask>> task = SyntheticTask::Create(config, seed);
  EXPECT_TRUE(task.ok()) << task.status().ToString();
  return task.ok() ? std::move(*task) : nullptr;
}

// Checks what every task's batch promises: shapes, ids in range, shifted targets except at the answer,
// and a loss mask that is 1 only at the last position.
void ExpectWellFormedBatch(const SyntheticTask& task, const TokenBatch& batch) {
  const int64_t seq_len = batch.seq_len;
  ASSERT_EQ(batch.inputs.size(), static_cast<size_t>(batch.batch_size * seq_len));
  ASSERT_EQ(batch.targets.size(), batch.inputs.size());
  ASSERT_EQ(batch.loss_mask.size(), batch.inputs.size());
  for (int64_t row = 0; row < batch.batch_size; ++row) {
    for (int64_t t = 0; t < seq_len; ++t) {
      const size_t i = static_cast<size_t>(row * seq_len + t);
      ASSERT_GE(batch.inputs[i], 0);
      ASSERT_LT(batch.inputs[i], task.vocab_size());
      ASSERT_LT(batch.targets[i], task.vocab_size());
      ASSERT_EQ(batch.loss_mask[i], t == seq_len - 1 ? 1.0f : 0.0f) << "row " << row << " t " << t;
      if (t + 1 < seq_len) {
        ASSERT_EQ(batch.targets[i], batch.inputs[i + 1]);
      }
    }
  }
}

// ---- NRW --------------------------------------------------------------------------------------------

DataConfig NrwConfig(int64_t seq_len, int64_t centre, int64_t width, double buffer) {
  DataConfig config = TaskConfig("nrw", seq_len);
  config.nrw.window_centre = centre;
  config.nrw.window_width = width;
  config.nrw.buffer = buffer;
  return config;
}

TEST(NrwTaskTest, AnswerIsYesExactlyWhenTheNeedleIsInsideTheWindow) {
  const DataConfig config = NrwConfig(256, 100, 30, 0.0);
  auto task = CreateOrDie(config);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->vocab_size(), 5);
  int64_t checked = 0;
  for (int64_t index = 0; index < 50; ++index) {
    const TokenBatch batch = task->Batch(Split::kTrain, index, 16, 256);
    ExpectWellFormedBatch(*task, batch);
    for (int64_t row = 0; row < 16; ++row) {
      const int32_t* inputs = batch.inputs.data() + row * 256;
      ASSERT_EQ(inputs[255], NrwTokens::kQuery);
      int64_t needle = -1;
      for (int64_t t = 0; t < 255; ++t) {
        if (inputs[t] == NrwTokens::kNeedle) {
          ASSERT_EQ(needle, -1) << "two needles";
          needle = t;
        } else {
          ASSERT_EQ(inputs[t], NrwTokens::kBackground);
        }
      }
      ASSERT_NE(needle, -1);
      const int64_t delta = 255 - needle;
      EXPECT_EQ(task->Instance(Split::kTrain, index, row, 256).nrw_delta, delta);
      const bool yes = std::abs(delta - 100) <= 15;
      EXPECT_EQ(batch.targets[row * 256 + 255], yes ? NrwTokens::kYes : NrwTokens::kNo) << "delta " << delta;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 800);
}

TEST(NrwTaskTest, ClassesAreBalanced) {
  auto task = CreateOrDie(NrwConfig(512, 200, 16, 0.0));
  int64_t yes = 0;
  const int64_t total = 20000;
  for (int64_t index = 0; index < total / 50; ++index) {
    const TokenBatch batch = task->Batch(Split::kTrain, index, 50, 512);
    for (int64_t row = 0; row < 50; ++row) yes += batch.targets[row * 512 + 511] == NrwTokens::kYes;
  }
  // Binomial(20000, 0.5) has standard deviation ~71: allow 5 sigma.
  EXPECT_NEAR(static_cast<double>(yes), total / 2.0, 355.0);
}

TEST(NrwTaskTest, BufferLeavesOutOnlyTheNoBandBeyondTheWindow) {
  // AdaRoPE appendix D with c = 100, W = 40, r = 0.1: YES for |delta - c| <= 20 (all 41 distances, the
  // edges 80 and 120 included), NO only for |delta - c| > 22, nothing with 20 < |delta - c| <= 22.
  auto task = CreateOrDie(NrwConfig(256, 100, 40, 0.1));
  std::set<int64_t> yes_deltas, no_deltas;
  for (int64_t index = 0; index < 6000; ++index) {
    const SyntheticInstance instance = task->Instance(Split::kTrain, index, 0, 256);
    const int64_t offset = std::abs(instance.nrw_delta - 100);
    if (instance.tokens.back() == NrwTokens::kYes) {
      EXPECT_LE(offset, 20) << "delta " << instance.nrw_delta;
      yes_deltas.insert(instance.nrw_delta);
    } else {
      EXPECT_GT(offset, 22) << "delta " << instance.nrw_delta;
      no_deltas.insert(instance.nrw_delta);
    }
  }
  EXPECT_EQ(yes_deltas.size(), 41u);
  EXPECT_EQ(*yes_deltas.begin(), 80);
  EXPECT_EQ(*yes_deltas.rbegin(), 120);
  EXPECT_EQ(no_deltas.count(77), 1u);
  EXPECT_EQ(no_deltas.count(123), 1u);
  EXPECT_EQ(no_deltas.count(78), 0u);
  EXPECT_EQ(no_deltas.count(122), 0u);
}

TEST(NrwTaskTest, ABufferOnAnExactIntegerEdgeLeavesTheEdgeOut) {
  // (1 + 0.5) * 40 / 2 = 30 exactly: |delta - c| = 30 is not beyond it, 31 is the first NO offset.
  auto task = CreateOrDie(NrwConfig(256, 100, 40, 0.5));
  std::set<int64_t> no_offsets;
  for (int64_t index = 0; index < 6000; ++index) {
    const SyntheticInstance instance = task->Instance(Split::kTrain, index, 0, 256);
    if (instance.tokens.back() == NrwTokens::kNo) no_offsets.insert(std::abs(instance.nrw_delta - 100));
  }
  EXPECT_EQ(*no_offsets.begin(), 31);
}

TEST(NrwTaskTest, BufferOutsideItsRangeIsInvalidArgument) {
  EXPECT_EQ(SyntheticTask::Create(NrwConfig(256, 100, 40, -0.1), 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SyntheticTask::Create(NrwConfig(256, 100, 40, 2000.0), 0).status().code(), StatusCode::kInvalidArgument);
}

// ---- Position indexing ------------------------------------------------------------------------------

TEST(PositionIndexTaskTest, AnswerIsTheSymbolAtTheEncodedIndex) {
  DataConfig config = TaskConfig("position_index", 128);
  config.position_index.symbols = 4;
  auto task = CreateOrDie(config);
  auto* position = dynamic_cast<PositionIndexTask*>(task.get());
  ASSERT_NE(position, nullptr);
  EXPECT_EQ(task->vocab_size(), 6);
  for (int64_t seq_len : {4, 5, 6, 7, 20, 67, 68, 128, 300}) {
    const TokenBatch batch = task->Batch(Split::kValidation, 2, 8, seq_len);
    ExpectWellFormedBatch(*task, batch);
    for (int64_t row = 0; row < 8; ++row) {
      const int32_t* inputs = batch.inputs.data() + row * seq_len;
      ASSERT_EQ(inputs[0], position->bos());
      // Read the list up to QUERY, then the base-4 index after it.
      int64_t query = 1;
      while (inputs[query] != position->query()) {
        ASSERT_LT(inputs[query], 4);
        ++query;
      }
      const int64_t list_length = query - 1;
      ASSERT_GE(list_length, 1);
      int64_t k = 0;
      for (int64_t t = query + 1; t < seq_len; ++t) {
        ASSERT_LT(inputs[t], 4);
        k = 4 * k + inputs[t];
      }
      ASSERT_LT(k, list_length) << "seq_len " << seq_len;
      EXPECT_EQ(batch.targets[row * seq_len + seq_len - 1], inputs[1 + k]);
      EXPECT_EQ(task->Instance(Split::kValidation, 2, row, seq_len).position_index_k, k);
      // The list is as long as the digits allow.
      EXPECT_EQ(list_length, position->ListLength(seq_len));
    }
  }
}

TEST(PositionIndexTaskTest, AnswersAreNearUniformOverTheSymbols) {
  DataConfig config = TaskConfig("position_index", 64);
  auto task = CreateOrDie(config);
  std::vector<int64_t> counts(4, 0);
  for (int64_t index = 0; index < 200; ++index) {
    const TokenBatch batch = task->Batch(Split::kTrain, index, 20, 64);
    for (int64_t row = 0; row < 20; ++row) ++counts[static_cast<size_t>(batch.targets[row * 64 + 63])];
  }
  for (int64_t count : counts) EXPECT_NEAR(static_cast<double>(count), 1000.0, 150.0);
}

// ---- NIAH -------------------------------------------------------------------------------------------

TEST(NiahTaskTest, AnswerIsTheValueOfTheQueriedKey) {
  DataConfig config = TaskConfig("niah", 200);
  config.niah.max_distractors = 7;
  config.niah.key_symbols = 10;
  config.niah.value_symbols = 6;
  config.niah.filler_symbols = 5;
  auto task = CreateOrDie(config);
  auto* niah = dynamic_cast<NiahTask*>(task.get());
  ASSERT_NE(niah, nullptr);
  EXPECT_EQ(task->vocab_size(), 5 + 10 + 6 + 4);
  EXPECT_EQ(task->vocab_size(), DataVocabSize(config));
  std::set<int64_t> depths;
  std::set<int64_t> distractor_counts;
  for (int64_t seq_len : {200, 35, 400}) {
    for (int64_t index = 0; index < 40; ++index) {
      const TokenBatch batch = task->Batch(Split::kTrain, index, 8, seq_len);
      ExpectWellFormedBatch(*task, batch);
      for (int64_t row = 0; row < 8; ++row) {
        const int32_t* inputs = batch.inputs.data() + row * seq_len;
        ASSERT_EQ(inputs[0], niah->bos());
        ASSERT_EQ(inputs[seq_len - 2], niah->query());
        const int32_t queried = inputs[seq_len - 1];
        ASSERT_GE(queried, niah->first_key());
        ASSERT_LT(queried, niah->first_value());
        // Find every pair in the haystack; keys are distinct and exactly one matches.
        std::set<int32_t> keys;
        int64_t pairs = 0;
        int64_t needle = -1;
        for (int64_t t = 1; t < seq_len - 2; ++t) {
          if (inputs[t] == niah->key_mark()) {
            ASSERT_LT(t + 3, seq_len - 2);
            ASSERT_EQ(inputs[t + 2], niah->value_mark());
            ASSERT_TRUE(keys.insert(inputs[t + 1]).second) << "duplicate key";
            if (inputs[t + 1] == queried) needle = t;
            ++pairs;
            t += 3;
          } else {
            ASSERT_LT(inputs[t], 5) << "stray non-filler token at " << t;
          }
        }
        ASSERT_NE(needle, -1);
        EXPECT_EQ(batch.targets[row * seq_len + seq_len - 1], inputs[needle + 3]);
        const SyntheticInstance instance = task->Instance(Split::kTrain, index, row, seq_len);
        EXPECT_EQ(instance.niah_needle_offset, needle);
        EXPECT_EQ(instance.niah_distractors, pairs - 1);
        EXPECT_LE(instance.niah_distractors, 7);
        EXPECT_EQ(needle, 1 + (instance.niah_depth_tenths * (seq_len - 7) + 5) / 10);
        depths.insert(instance.niah_depth_tenths);
        if (seq_len == 200) distractor_counts.insert(instance.niah_distractors);
      }
    }
  }
  EXPECT_EQ(depths.size(), 11u);
  EXPECT_EQ(distractor_counts.size(), 8u);  // 0..7 all drawn
}

TEST(NiahTaskTest, GridBatchesHoldTheirCellsDepthAndDistractorsForEverySeed) {
  DataConfig config = TaskConfig("niah", 128);
  config.niah.max_distractors = 7;
  auto first = CreateOrDie(config);
  auto other_seed = SyntheticTask::Create(config, 99);
  ASSERT_TRUE(other_seed.ok());
  const auto* niah = dynamic_cast<NiahTask*>(first.get());
  const auto* niah_other = dynamic_cast<NiahTask*>(other_seed->get());
  ASSERT_NE(niah, nullptr);
  for (int64_t depth : {0, 3, 10}) {
    for (int64_t distractors : {0, 5, 7}) {
      std::vector<SyntheticInstance> instances;
      const TokenBatch batch = niah->GridBatch(depth, distractors, 6, 128, &instances);
      ExpectWellFormedBatch(*first, batch);
      ASSERT_EQ(instances.size(), 6u);
      for (int64_t row = 0; row < 6; ++row) {
        const SyntheticInstance& instance = instances[static_cast<size_t>(row)];
        EXPECT_EQ(instance.niah_depth_tenths, depth);
        EXPECT_EQ(instance.niah_distractors, distractors);
        EXPECT_EQ(instance.niah_needle_offset, 1 + (depth * (128 - 7) + 5) / 10);
        // The answer is the needle's value.
        EXPECT_EQ(batch.targets[row * 128 + 127], instance.tokens[static_cast<size_t>(instance.niah_needle_offset + 3)]);
      }
      // The same instances for every training seed and at every call; rows differ.
      EXPECT_EQ(niah_other->GridBatch(depth, distractors, 6, 128).inputs, batch.inputs);
      EXPECT_NE(std::vector<int32_t>(batch.inputs.begin(), batch.inputs.begin() + 128),
                std::vector<int32_t>(batch.inputs.begin() + 128, batch.inputs.begin() + 256));
    }
  }
  // A haystack that holds fewer pairs than asked places as many as fit.
  std::vector<SyntheticInstance> crowded;
  niah->GridBatch(5, 7, 2, 24, &crowded);
  EXPECT_LT(crowded[0].niah_distractors, 7);
}

TEST(NiahTaskTest, SequenceTooShortForAllPairsIsInvalidArgument) {
  DataConfig config = TaskConfig("niah", 4 * 32 + 2);
  config.niah.max_distractors = 31;
  config.niah.key_symbols = 32;
  StatusOr<std::unique_ptr<SyntheticTask>> task = SyntheticTask::Create(config, 0);
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.status().code(), StatusCode::kInvalidArgument);
  config.seq_len = 4 * 32 + 3;
  EXPECT_TRUE(SyntheticTask::Create(config, 0).ok());
}

// ---- All tasks --------------------------------------------------------------------------------------

class AllTasksTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AllTasksTest, SameSplitAndIndexGiveIdenticalBatches) {
  auto task = CreateOrDie(TaskConfig(GetParam(), 256));
  for (Split split : {Split::kTrain, Split::kValidation}) {
    const TokenBatch first = task->Batch(split, 9, 8, 256);
    const TokenBatch again = task->Batch(split, 9, 8, 256);
    EXPECT_EQ(first.inputs, again.inputs);
    EXPECT_EQ(first.targets, again.targets);
    EXPECT_EQ(first.loss_mask, again.loss_mask);
    EXPECT_NE(first.inputs, task->Batch(split, 10, 8, 256).inputs);
  }
}

TEST_P(AllTasksTest, ValidationStreamDiffersFromTrainingAndIgnoresTheTrainingSeed) {
  auto task = CreateOrDie(TaskConfig(GetParam(), 256), 1);
  auto other_seed = CreateOrDie(TaskConfig(GetParam(), 256), 2);
  EXPECT_NE(task->Batch(Split::kTrain, 0, 8, 256).inputs, task->Batch(Split::kValidation, 0, 8, 256).inputs);
  EXPECT_NE(task->Batch(Split::kTrain, 0, 8, 256).inputs, other_seed->Batch(Split::kTrain, 0, 8, 256).inputs);
  EXPECT_EQ(task->Batch(Split::kValidation, 0, 8, 256).inputs,
            other_seed->Batch(Split::kValidation, 0, 8, 256).inputs);
}

TEST_P(AllTasksTest, RowsDoNotDependOnTheBatchSize) {
  auto task = CreateOrDie(TaskConfig(GetParam(), 256));
  const TokenBatch small = task->Batch(Split::kTrain, 4, 2, 256);
  const TokenBatch large = task->Batch(Split::kTrain, 4, 6, 256);
  EXPECT_TRUE(std::equal(small.inputs.begin(), small.inputs.end(), large.inputs.begin()));
}

TEST_P(AllTasksTest, VocabularyMatchesTheTrialConfig) {
  const DataConfig config = TaskConfig(GetParam(), 256);
  auto task = CreateOrDie(config);
  EXPECT_EQ(task->vocab_size(), DataVocabSize(config));
  EXPECT_EQ(task->SplitTokens(Split::kTrain), 0);
  EXPECT_EQ(task->Describe()["source"], GetParam());
  ExpectWellFormedBatch(*task, task->Batch(Split::kTrain, 0, 4, 256));
  ExpectWellFormedBatch(*task, task->Batch(Split::kValidation, 0, 4, 512));  // beyond the training length
}

TEST_P(AllTasksTest, RowsTooShortForAnInstanceAreNotScored) {
  auto task = CreateOrDie(TaskConfig(GetParam(), 256));
  const int64_t seq_len = task->MinSeqLen() - 1;
  ASSERT_GE(seq_len, 1);
  const TokenBatch batch = task->Batch(Split::kTrain, 0, 2, seq_len);
  for (float mask : batch.loss_mask) EXPECT_EQ(mask, 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Tasks, AllTasksTest, ::testing::Values("nrw", "niah", "position_index"));

}  // namespace
}  // namespace rung
