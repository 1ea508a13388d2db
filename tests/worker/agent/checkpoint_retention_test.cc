#include "worker/agent/checkpoint_retention.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/train/checkpoint.h"

namespace rung::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class CheckpointRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("rung_retention_test_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    earlier_ = (root_ / "attempt-1").string();
    final_ = (root_ / "attempt-2").string();
    for (int64_t step : {100, 200}) Touch(CheckpointPath(earlier_, step));
    for (int64_t step : {300, 400, 500}) Touch(CheckpointPath(final_, step));
    Touch(final_ + "/notes.txt");  // not a checkpoint: never removed
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Touch(const std::string& path) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << "x";
  }

  fs::path root_;
  std::string earlier_, final_;
};

TEST_F(CheckpointRetentionTest, FinalKeepsOnlyTheNewestCheckpointOfTheSuccessfulAttempt) {
  StatusOr<int> removed = ApplyRetentionAfterSuccess(RetentionAfterSuccess::kFinal, final_, {earlier_});
  ASSERT_TRUE(removed.ok()) << removed.status().message();
  EXPECT_EQ(*removed, 4);
  EXPECT_THAT(ListCheckpoints(final_), ElementsAre(CheckpointPath(final_, 500)));
  EXPECT_THAT(ListCheckpoints(earlier_), IsEmpty());
  EXPECT_TRUE(fs::exists(final_ + "/notes.txt"));
}

TEST_F(CheckpointRetentionTest, FinalKeepsTheNewestIntactCheckpointWhenTheNewestIsDamaged) {
  // Checkpoints written by the real writer (with checksums); the newest then truncated.
  for (int64_t step : {600, 700}) {
    ASSERT_TRUE(WriteCheckpointAtomically(final_, step, 10, [](const std::string& temp) {
                  std::ofstream(temp) << "checkpoint bytes";
                  return Status::Ok();
                }).ok());
  }
  fs::resize_file(CheckpointPath(final_, 700), 3);
  ASSERT_TRUE(ApplyRetentionAfterSuccess(RetentionAfterSuccess::kFinal, final_, {earlier_}).ok());
  EXPECT_THAT(ListCheckpoints(final_), ElementsAre(CheckpointPath(final_, 600)));
  EXPECT_FALSE(fs::exists(ChecksumPath(CheckpointPath(final_, 700))));
}

TEST_F(CheckpointRetentionTest, AllKeepsEverythingAndNoneRemovesEveryCheckpoint) {
  ASSERT_EQ(ApplyRetentionAfterSuccess(RetentionAfterSuccess::kAll, final_, {earlier_}).value(), 0);
  EXPECT_EQ(ListCheckpoints(final_).size(), 3u);
  EXPECT_EQ(ListCheckpoints(earlier_).size(), 2u);
  ASSERT_EQ(ApplyRetentionAfterSuccess(RetentionAfterSuccess::kNone, final_, {earlier_}).value(), 5);
  EXPECT_THAT(ListCheckpoints(final_), IsEmpty());
  EXPECT_THAT(ListCheckpoints(earlier_), IsEmpty());
  EXPECT_TRUE(fs::exists(final_ + "/notes.txt"));
}

TEST_F(CheckpointRetentionTest, MissingFoldersAreNothingToRemove) {
  StatusOr<int> removed = ApplyRetentionAfterSuccess(RetentionAfterSuccess::kFinal, (root_ / "nope").string(),
                                                     {(root_ / "gone").string()});
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 0);
}

TEST(ParseRetentionAfterSuccessTest, NamesTheThreeSettingsAndRefusesOthers) {
  EXPECT_EQ(ParseRetentionAfterSuccess("final").value(), RetentionAfterSuccess::kFinal);
  EXPECT_EQ(ParseRetentionAfterSuccess("all").value(), RetentionAfterSuccess::kAll);
  EXPECT_EQ(ParseRetentionAfterSuccess("none").value(), RetentionAfterSuccess::kNone);
  StatusOr<RetentionAfterSuccess> bad = ParseRetentionAfterSuccess("latest");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("final, all, none"));
}

}  // namespace
}  // namespace rung::agent
