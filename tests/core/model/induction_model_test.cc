// The hand-set induction model (induction_model.h): a key of 5 distinct digits after a marker '#',
// hidden in random filler, is retrieved and copied after a final '#' at every length and depth; a
// randomly initialised model of the same shape does not; any byte copies after any marker; its
// checkpoint loads.
#include "tests/core/model/induction_model.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/train/checkpoint_io.h"

namespace rung {
namespace {

using testing_models::InductionModelConfig;
using testing_models::MakeInductionModel;
using testing_models::WriteInductionCheckpoint;

constexpr int64_t kPromptLengths[] = {64, 256, 512};
constexpr double kDepths[] = {0.0, 0.25, 0.5, 0.75, 1.0};
constexpr int64_t kKeyLength = 5;
// The longest prompt and the 4 tokens greedy decoding appends before its last prediction.
constexpr int64_t kMaxLength = 512 + kKeyLength - 1;
constexpr char kMarker = '#';

// Prompts of one length: `length` tokens each, filler of lowercase letters and spaces with
// "#<key>" at each depth of kDepths (0: the prompt's start, 1: just before the final '#'), then '#'.
struct NeedlePrompts {
  torch::Tensor tokens;           // [5 depths, length] int64
  std::vector<std::string> keys;  // 5 distinct digits each
};

NeedlePrompts MakeNeedlePrompts(int64_t length, std::mt19937& rng) {
  const std::string letters = "abcdefghijklmnopqrstuvwxyz ";
  std::uniform_int_distribution<size_t> letter(0, letters.size() - 1);
  NeedlePrompts prompts;
  prompts.tokens = torch::empty({static_cast<int64_t>(std::size(kDepths)), length}, torch::kLong);
  for (size_t row = 0; row < std::size(kDepths); ++row) {
    std::string digits = "0123456789";
    std::shuffle(digits.begin(), digits.end(), rng);
    const std::string key = digits.substr(0, kKeyLength);
    std::string text;
    for (int64_t i = 0; i < length - kKeyLength - 2; ++i) text += letters[letter(rng)];
    const auto at = static_cast<size_t>(std::lround(kDepths[row] * static_cast<double>(text.size())));
    text.insert(at, kMarker + key);
    text += kMarker;
    for (int64_t i = 0; i < length; ++i) prompts.tokens[row][i] = static_cast<unsigned char>(text[i]);
    prompts.keys.push_back(key);
  }
  return prompts;
}

// Every prompt length's prompts, from one fixed seed.
std::vector<NeedlePrompts> AllNeedlePrompts() {
  std::mt19937 rng(20240611);
  std::vector<NeedlePrompts> all;
  for (int64_t length : kPromptLengths) all.push_back(MakeNeedlePrompts(length, rng));
  return all;
}

// Greedy decoding, a full forward per step: the `steps` argmax tokens [B, steps].
torch::Tensor GreedyDecode(Transformer& model, torch::Tensor tokens, int64_t steps) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> chosen;
  for (int64_t step = 0; step < steps; ++step) {
    chosen.push_back(model->forward(tokens).select(1, -1).argmax(-1, /*keepdim=*/true));
    tokens = torch::cat({tokens, chosen.back()}, 1);
  }
  return torch::cat(chosen, 1);
}

std::string AsText(const torch::Tensor& row) {
  std::string text;
  for (int64_t i = 0; i < row.size(0); ++i) text += static_cast<char>(row[i].item<int64_t>());
  return text;
}

TEST(InductionModel, PredictsTheDigitAfterTheMarkerAtEveryLengthAndDepthByEightLogits) {
  Transformer model = MakeInductionModel(kMaxLength);
  torch::NoGradGuard no_grad;
  // The model's own kernel (the tiled one on CPU), and the exact reference.
  for (int kernel : {-1, static_cast<int>(AttentionKernel::kComposite)}) {
    model->set_attention_kernel(kernel);
    for (const NeedlePrompts& prompts : AllNeedlePrompts()) {
      const torch::Tensor last = model->forward(prompts.tokens).select(1, -1);  // [5, 256]
      for (int64_t row = 0; row < last.size(0); ++row) {
        const std::string where = "kernel " + std::to_string(kernel) + " length " +
                                  std::to_string(prompts.tokens.size(1)) + " depth " + std::to_string(kDepths[row]) +
                                  " key " + prompts.keys[row];
        const int64_t expected = prompts.keys[row][0];
        EXPECT_EQ(last[row].argmax().item<int64_t>(), expected) << where;
        // The copied byte's logit is 32 and every other one at most 24 (induction_model.h).
        auto others = last[row].clone();
        others[expected] = -1e9;
        EXPECT_NEAR(last[row][expected].item<float>(), 32.0f, 1e-2f) << where;
        EXPECT_LE(others.max().item<float>(), 24.0f + 1e-2f) << where;
      }
    }
  }
}

// Greedy decoding after every needle prompt gives its key.
void ExpectCopiesEveryKey(Transformer& model, const std::string& which) {
  for (const NeedlePrompts& prompts : AllNeedlePrompts()) {
    const torch::Tensor decoded = GreedyDecode(model, prompts.tokens, kKeyLength);
    for (int64_t row = 0; row < decoded.size(0); ++row) {
      EXPECT_EQ(AsText(decoded[row]), prompts.keys[row])
          << which << ": length " << prompts.tokens.size(1) << " depth " << kDepths[row];
    }
  }
}

TEST(InductionModel, GreedyDecodingCopiesTheWholeKey) {
  Transformer model = MakeInductionModel(kMaxLength);
  ExpectCopiesEveryKey(model, "constructed");
}

// The retrieval is the construction's, not the shape's: untrained weights almost never name the digit.
TEST(InductionModel, ARandomModelOfTheSameShapeRarelyPredictsTheDigit) {
  torch::manual_seed(7);
  Transformer model(InductionModelConfig(kMaxLength));
  model->eval();
  torch::NoGradGuard no_grad;
  int64_t right = 0, cases = 0;
  for (const NeedlePrompts& prompts : AllNeedlePrompts()) {
    const torch::Tensor predicted = model->forward(prompts.tokens).select(1, -1).argmax(-1);
    for (int64_t row = 0; row < predicted.size(0); ++row, ++cases) {
      right += predicted[row].item<int64_t>() == prompts.keys[row][0];
    }
  }
  EXPECT_EQ(cases, 15);
  EXPECT_LE(right, 2) << right << " of " << cases << " right";
}

// Any marker byte and any successor: filler of every byte but the marker (so it holds the successor
// too, and digits), the marker at a random place, lengths up to the model's.
TEST(InductionModel, CopiesAnyByteThatFollowedAnyMarker) {
  Transformer model = MakeInductionModel(kMaxLength);
  torch::NoGradGuard no_grad;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> byte(0, 255), length(3, kMaxLength);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t marker = byte(rng), n = length(rng);
    int64_t successor = byte(rng);
    if (successor == marker) successor = (successor + 1) % 256;  // the marker must occur once before
    auto tokens = torch::empty({1, n}, torch::kLong);
    for (int64_t i = 0; i < n; ++i) {
      int64_t filler = byte(rng);
      while (filler == marker) filler = byte(rng);
      tokens[0][i] = filler;
    }
    const int64_t at = std::uniform_int_distribution<int64_t>(0, n - 3)(rng);
    tokens[0][at] = marker;
    tokens[0][at + 1] = successor;
    tokens[0][n - 1] = marker;
    EXPECT_EQ(model->forward(tokens)[0][n - 1].argmax().item<int64_t>(), successor)
        << "marker " << marker << " successor " << successor << " at " << at << " of " << n;
  }
}

// The checkpoint: read back as `rung eval` reads one, and copied by train.init into a randomly
// initialised model of the same shape, it copies every key.
TEST(InductionModel, ItsCheckpointLoadsAndInitialisesModelsThatCopy) {
  const std::string dir = ::testing::TempDir() + "rung_induction_checkpoint_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  const StatusOr<std::string> path = WriteInductionCheckpoint(dir, kMaxLength);
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  StatusOr<CheckpointModel> loaded = LoadCheckpointModel(*path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  torch::manual_seed(3);
  Transformer initialised(InductionModelConfig(kMaxLength));
  InitConfig init;
  init.checkpoint = dir;
  const Status copied = InitializeFromCheckpoint(init, initialised);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(copied.ok()) << copied.ToString();
  ExpectCopiesEveryKey(loaded->model, "loaded");
  initialised->eval();
  ExpectCopiesEveryKey(initialised, "train.init");
}

}  // namespace
}  // namespace rung
