// Checkpoint files (core/train/checkpoint.h): each is published with its checksum, a damaged one is
// known before anything is loaded from it, and a resume under "auto" passes over damaged ones for
// the newest intact one. Torch-free: the files here are written by a callback, as the stand-in does.
#include "core/train/checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

class CheckpointFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("rung_checkpoint_files_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(int64_t step, int64_t keep = 5) {
    ASSERT_TRUE(WriteCheckpointAtomically(dir_, step, keep, [&](const std::string& temp) {
                  std::ofstream(temp) << "checkpoint of step " << step << std::string(1000, '.');
                  return Status::Ok();
                }).ok());
  }

  static void Truncate(const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); }

  // A load that accepts every file, recording what it was asked to load.
  std::function<Status(const std::string&)> Loader() {
    return [this](const std::string& path) {
      loaded_.push_back(path);
      return Status::Ok();
    };
  }

  std::string dir_;
  std::vector<std::string> loaded_;
};

TEST_F(CheckpointFilesTest, ACheckpointIsPublishedWithItsChecksumAndADamagedOneFailsVerification) {
  Write(10);
  const std::string path = CheckpointPath(dir_, 10);
  EXPECT_TRUE(fs::exists(ChecksumPath(path)));
  EXPECT_TRUE(VerifyCheckpoint(path).ok());
  Truncate(path);
  const Status damaged = VerifyCheckpoint(path);
  EXPECT_EQ(damaged.code(), StatusCode::kDataLoss);
  EXPECT_THAT(damaged.message(), HasSubstr("is damaged"));
}

TEST_F(CheckpointFilesTest, ACheckpointWithoutAChecksumFileIsOneOfAnEarlierReleaseAndVerifies) {
  Write(10);
  fs::remove(ChecksumPath(CheckpointPath(dir_, 10)));
  EXPECT_TRUE(VerifyCheckpoint(CheckpointPath(dir_, 10)).ok());
}

TEST_F(CheckpointFilesTest, AutoResumePassesOverADamagedNewestForTheNewestIntactAndSaysSo) {
  Write(10);
  Write(20);
  Write(30);
  Truncate(CheckpointPath(dir_, 30));
  StatusOr<ResumeChoice> choice = ResumeFromNewestIntact("auto", dir_, Loader());
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->path, CheckpointPath(dir_, 20));
  ASSERT_THAT(choice->skipped, SizeIs(1));
  EXPECT_THAT(choice->skipped[0], HasSubstr(CheckpointPath(dir_, 30)));
  EXPECT_THAT(loaded_, ElementsAre(CheckpointPath(dir_, 20))) << "a damaged file is never loaded";
}

// An attempt cut off from the coordinator trains on and prunes: the checkpoint the next attempt was
// named has gone, and the newest intact one after it in the same folder stands in for it.
TEST_F(CheckpointFilesTest, ANamedCheckpointThatWasPrunedGivesWayToTheNewestIntactAfterIt) {
  Write(10, 2);
  const std::string named = CheckpointPath(dir_, 10);
  Write(20, 2);
  Write(30, 2);
  Write(40, 2);
  Truncate(CheckpointPath(dir_, 40));
  ASSERT_FALSE(fs::exists(named));
  StatusOr<ResumeChoice> choice = ResumeFromNewestIntact(named, "", Loader());
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->path, CheckpointPath(dir_, 30));
  ASSERT_THAT(choice->skipped, SizeIs(1));
  EXPECT_THAT(choice->skipped[0], HasSubstr("gone"));
  EXPECT_THAT(loaded_, ElementsAre(CheckpointPath(dir_, 30)));
  // Nothing newer there: still NOT_FOUND.
  EXPECT_EQ(ResumeFromNewestIntact(CheckpointPath(dir_, 50), "", Loader()).status().code(), StatusCode::kNotFound);
}

TEST_F(CheckpointFilesTest, AutoResumeAlsoPassesOverOneWhoseLoadFindsItUnreadable) {
  Write(10);
  Write(20);
  StatusOr<ResumeChoice> choice = ResumeFromNewestIntact("auto", dir_, [&](const std::string& path) -> Status {
    loaded_.push_back(path);
    return path == CheckpointPath(dir_, 20) ? Status::DataLoss("cannot read it") : Status::Ok();
  });
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->path, CheckpointPath(dir_, 10));
  EXPECT_THAT(loaded_, ElementsAre(CheckpointPath(dir_, 20), CheckpointPath(dir_, 10)));
}

TEST_F(CheckpointFilesTest, ANamedDamagedCheckpointOrNoIntactOneIsAnErrorAndAnyOtherLoadErrorStopsAtOnce) {
  Write(10);
  Write(20);
  Truncate(CheckpointPath(dir_, 20));
  EXPECT_EQ(ResumeFromNewestIntact(CheckpointPath(dir_, 20), dir_, Loader()).status().code(), StatusCode::kDataLoss);
  Truncate(CheckpointPath(dir_, 10));
  StatusOr<ResumeChoice> none = ResumeFromNewestIntact("auto", dir_, Loader());
  EXPECT_EQ(none.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(none.status().message(), HasSubstr("no intact checkpoint"));
  EXPECT_TRUE(loaded_.empty());

  Write(30);
  const Status other = ResumeFromNewestIntact("auto", dir_, [](const std::string&) {
                         return Status::FailedPrecondition("written by another trial config");
                       }).status();
  EXPECT_EQ(other.code(), StatusCode::kFailedPrecondition);
}

TEST_F(CheckpointFilesTest, NeverOrNoCheckpointsStartsAfreshAndRetentionTakesChecksumsAlong) {
  StatusOr<ResumeChoice> fresh = ResumeFromNewestIntact("auto", dir_, Loader());
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->path.empty());
  for (int64_t step : {10, 20, 30}) Write(step, /*keep=*/2);
  EXPECT_THAT(ListCheckpoints(dir_), ElementsAre(CheckpointPath(dir_, 20), CheckpointPath(dir_, 30)));
  EXPECT_FALSE(fs::exists(ChecksumPath(CheckpointPath(dir_, 10))));
  StatusOr<ResumeChoice> never = ResumeFromNewestIntact("never", dir_, Loader());
  ASSERT_TRUE(never.ok());
  EXPECT_TRUE(never->path.empty());
}

}  // namespace
}  // namespace rung
