#include "core/data/token_shards.h"

#include <fstream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/common/sha256.h"
#include "tests/core/data/test_files.h"

namespace rung {
namespace {

using data_test::ReadBytes;
using data_test::Ramp;
using data_test::TempFolder;
using data_test::WriteBytes;
using data_test::WriteTokens;

DataConfig ShardConfig(const std::string& path, int64_t token_bytes, int64_t vocab_size) {
  DataConfig config;
  config.source = "shards";
  config.path = path;
  config.token_bytes = token_bytes;
  config.vocab_size = vocab_size;
  config.seq_len = 16;
  config.val_fraction = 0.1;
  return config;
}

std::unique_ptr<TokenShards> OpenOrDie(const DataConfig& config, uint64_t seed = 3) {
  return data_test::OpenedOrNull(TokenShards::Open(config, seed));
}

// `ids` written as data.bin in `folder` (raw little-endian tokens, `token_bytes` each), and opened.
std::unique_ptr<TokenShards> WrittenAndOpened(const TempFolder& folder, const std::vector<uint32_t>& ids,
                                              int token_bytes, int64_t vocab_size) {
  WriteTokens(folder / "data.bin", ids, token_bytes);
  return OpenOrDie(ShardConfig(folder / "data.bin", token_bytes, vocab_size));
}

TEST(TokenShardsTest, RoundTripsUint16) {
  TempFolder folder;
  const std::vector<uint32_t> ids = Ramp(0, 1000, 65536);
  auto shards = WrittenAndOpened(folder, ids, 2, 65536);
  ASSERT_NE(shards, nullptr);
  EXPECT_EQ(shards->SplitTokens(Split::kTrain), 900);
  EXPECT_EQ(shards->SplitTokens(Split::kValidation), 100);
  for (int64_t p = 0; p < 900; ++p) ASSERT_EQ(shards->Token(Split::kTrain, p), ids[p]);
  for (int64_t p = 0; p < 100; ++p) ASSERT_EQ(shards->Token(Split::kValidation, p), ids[900 + p]);
  EXPECT_EQ(shards->vocab_size(), 65536);
}

TEST(TokenShardsTest, RoundTripsUint32AboveSixteenBits) {
  TempFolder folder;
  const std::vector<uint32_t> ids = Ramp(70000, 500, 100000000);
  auto shards = WrittenAndOpened(folder, ids, 4, 100000000);
  ASSERT_NE(shards, nullptr);
  for (int64_t p = 0; p < 450; ++p) ASSERT_EQ(shards->Token(Split::kTrain, p), ids[p]);
  const TokenBatch batch = shards->Batch(Split::kValidation, 0, 2, 16);
  for (int64_t t = 0; t < 16; ++t) EXPECT_EQ(batch.inputs[t], static_cast<int32_t>(ids[450 + t]));
  for (int64_t t = 0; t < 16; ++t) EXPECT_EQ(batch.inputs[16 + t], static_cast<int32_t>(ids[450 + 16 + t]));
}

TEST(TokenShardsTest, BatchesAreDeterministicAndTargetsAreInputsShiftedByOne) {
  TempFolder folder;
  auto shards = WrittenAndOpened(folder, Ramp(0, 5000, 50000), 2, 50000);
  for (Split split : {Split::kTrain, Split::kValidation}) {
    const TokenBatch batch = shards->Batch(split, 11, 4, 16);
    EXPECT_EQ(batch.inputs, shards->Batch(split, 11, 4, 16).inputs);
    EXPECT_TRUE(batch.loss_mask.empty());
    for (int64_t row = 0; row < 4; ++row) {
      for (int64_t t = 0; t < 16; ++t) {
        // Ids are a ramp, so each row is consecutive and the target is the next id.
        EXPECT_EQ(batch.targets[row * 16 + t], batch.inputs[row * 16 + t] + 1);
      }
    }
  }
  EXPECT_NE(shards->Batch(Split::kTrain, 0, 4, 16).inputs, shards->Batch(Split::kTrain, 1, 4, 16).inputs);
}

TEST(TokenShardsTest, FolderShardsFormOneStreamInSortedOrder) {
  TempFolder folder;
  WriteTokens(folder / "shards/001.bin", Ramp(100, 50, 1000), 2);
  WriteTokens(folder / "shards/000.bin", Ramp(0, 100, 1000), 2);
  WriteTokens(folder / "shards/002.bin", Ramp(150, 50, 1000), 2);
  WriteBytes(folder / "shards/README.txt", "not a shard, odd size");
  DataConfig config = ShardConfig(folder / "shards", 2, 1000);
  config.val_fraction = 0.25;
  auto shards = OpenOrDie(config);
  ASSERT_NE(shards, nullptr);
  EXPECT_EQ(shards->SplitTokens(Split::kTrain), 150);
  EXPECT_EQ(shards->SplitTokens(Split::kValidation), 50);
  for (int64_t p = 0; p < 150; ++p) ASSERT_EQ(shards->Token(Split::kTrain, p), p);
  for (int64_t p = 0; p < 50; ++p) ASSERT_EQ(shards->Token(Split::kValidation, p), 150 + p);
  // Training windows cross file boundaries seamlessly.
  for (int64_t index = 0; index < 20; ++index) {
    const TokenBatch batch = shards->Batch(Split::kTrain, index, 4, 16);
    for (size_t i = 0; i < batch.inputs.size(); ++i) EXPECT_EQ(batch.targets[i], batch.inputs[i] + 1);
  }
  EXPECT_EQ(shards->Describe()["files"].size(), 3u);
}

TEST(TokenShardsTest, ValPathGivesTheValidationSplit) {
  TempFolder folder;
  WriteTokens(folder / "train.bin", Ramp(0, 300, 1000), 2);
  WriteTokens(folder / "val/a.bin", Ramp(500, 40, 1000), 2);
  DataConfig config = ShardConfig(folder / "train.bin", 2, 1000);
  config.val_path = folder / "val";
  auto shards = OpenOrDie(config);
  ASSERT_NE(shards, nullptr);
  EXPECT_EQ(shards->SplitTokens(Split::kTrain), 300);
  EXPECT_EQ(shards->SplitTokens(Split::kValidation), 40);
  EXPECT_EQ(shards->Token(Split::kValidation, 0), 500);
  EXPECT_EQ(shards->Describe()["split"], "val_path");
}

TEST(TokenShardsTest, OddSizedFileIsDataLossNamingTheFile) {
  TempFolder folder;
  WriteTokens(folder / "data.bin", Ramp(0, 100, 1000), 2);
  WriteBytes(folder / "data.bin", ReadBytes(folder / "data.bin") + "x");
  StatusOr<std::unique_ptr<TokenShards>> shards = TokenShards::Open(ShardConfig(folder / "data.bin", 2, 1000), 0);
  ASSERT_FALSE(shards.ok());
  EXPECT_EQ(shards.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(shards.status().message().find(folder / "data.bin"), std::string::npos) << shards.status().message();

  WriteTokens(folder / "quad.bin", Ramp(0, 101, 1000), 2);  // 202 bytes: not a multiple of 4
  EXPECT_EQ(TokenShards::Open(ShardConfig(folder / "quad.bin", 4, 1000), 0).status().code(), StatusCode::kDataLoss);
}

TEST(TokenShardsTest, OutOfRangeIdIsDataLossNamingFileAndOffset) {
  TempFolder folder;
  std::vector<uint32_t> ids = Ramp(0, 200, 100);
  ids[137] = 100;  // vocab_size is 100
  WriteTokens(folder / "bad.bin", ids, 4);
  StatusOr<std::unique_ptr<TokenShards>> shards = TokenShards::Open(ShardConfig(folder / "bad.bin", 4, 100), 0);
  ASSERT_FALSE(shards.ok());
  EXPECT_EQ(shards.status().code(), StatusCode::kDataLoss);
  const std::string& message = shards.status().message();
  EXPECT_NE(message.find(folder / "bad.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("token offset 137"), std::string::npos) << message;
}

TEST(TokenShardsTest, MissingPathIsNotFound) {
  EXPECT_EQ(TokenShards::Open(ShardConfig("/nonexistent/rung/shards", 2, 100), 0).status().code(),
            StatusCode::kNotFound);
  TempFolder folder;
  WriteBytes(folder / "notes.txt", "no shards here");
  EXPECT_EQ(TokenShards::Open(ShardConfig(folder.path(), 2, 100), 0).status().code(), StatusCode::kNotFound);
}

TEST(TokenShardsTest, TooFewTokensIsInvalidArgument) {
  TempFolder folder;
  WriteTokens(folder / "small.bin", Ramp(0, 60, 1000), 2);  // validation: 6 tokens < seq_len + 1
  EXPECT_EQ(TokenShards::Open(ShardConfig(folder / "small.bin", 2, 1000), 0).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(TokenShardsTest, DescribeRecordsSizeAndShaOfTheFirstMebibyte) {
  TempFolder folder;
  WriteTokens(folder / "data.bin", Ramp(0, 1000, 1000), 2);
  auto shards = OpenOrDie(ShardConfig(folder / "data.bin", 2, 1000));
  const nlohmann::json description = shards->Describe();
  EXPECT_EQ(description["source"], "shards");
  ASSERT_EQ(description["files"].size(), 1u);
  const nlohmann::json& file = description["files"][0];
  EXPECT_EQ(file["bytes"], 2000);
  EXPECT_EQ(file["tokens"], 1000);
  EXPECT_EQ(file["sha256_first_mib"], Sha256Hex(ReadBytes(folder / "data.bin")));
  EXPECT_EQ(file["ids_checked"], "all");
  EXPECT_EQ(description["tokens"]["train"], 900);
  EXPECT_EQ(description["tokens"]["validation"], 100);
}

// Lines of /proc/self/maps that map a file under `folder`.
int MappingsUnder(const std::string& folder) {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) count += line.find(folder + "/") != std::string::npos;
  return count;
}

TEST(TokenShardsTest, AFolderOfThousandsOfShardsKeepsAtMostTheBoundMappedAndReadsAllOfThem) {
  TempFolder folder;
  constexpr int kFiles = 3000, kTokens = 8;
  for (int f = 0; f < kFiles; ++f) {
    char name[32];
    std::snprintf(name, sizeof(name), "part_%05d.bin", f);
    WriteTokens(folder / name, Ramp(static_cast<uint32_t>(f * kTokens), kTokens, 65536), 2);
  }
  TokenShardsOptions options;
  options.max_mapped_files = 8;
  auto shards = data_test::OpenedOrNull(TokenShards::Open(ShardConfig(folder.path(), 2, 65536), 3, options));
  ASSERT_NE(shards, nullptr);
  EXPECT_LE(MappingsUnder(folder.path()), 8);
  ASSERT_EQ(shards->SplitTokens(Split::kTrain), kFiles * kTokens * 9 / 10);
  for (int64_t p = 0; p < shards->SplitTokens(Split::kTrain); ++p) ASSERT_EQ(shards->Token(Split::kTrain, p), p % 65536);
  EXPECT_LE(MappingsUnder(folder.path()), 8);

  // Batches from several threads at once, each mapping and dropping files, equal those drawn alone.
  std::vector<TokenBatch> alone;
  for (int64_t index = 0; index < 32; ++index) alone.push_back(shards->Batch(Split::kTrain, index, 8, 16));
  std::vector<std::vector<TokenBatch>> together(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < together.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int64_t index = 0; index < 32; ++index) together[t].push_back(shards->Batch(Split::kTrain, index, 8, 16));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::vector<TokenBatch>& batches : together) {
    for (size_t index = 0; index < alone.size(); ++index) ASSERT_EQ(batches[index].inputs, alone[index].inputs);
  }
  EXPECT_LE(MappingsUnder(folder.path()), 8);
}

}  // namespace
}  // namespace rung
