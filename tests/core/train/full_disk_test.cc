// rung-train on a full disk: a checkpoint that does not fit is an error value, not an abort. The
// small full disk is a tmpfs in a private mount namespace (tests/support/small_disk); where the
// machine refuses one, the test says so and is skipped, never passed.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/subprocess.h"
#include "tests/support/small_disk/small_disk.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(FullDiskTrainingTest, ACheckpointThatDoesNotFitExitsFiveNamingThePathAndLeavesNothingHalfWritten) {
  const fs::path scratch = fs::path(::testing::TempDir()) / ("rung-full-disk-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  std::ofstream(scratch / "trial.yaml") << "data: {source: builtin, seq_len: 64}\n"
                                           "model: {layers: 2, d_model: 64, heads: 2}\n"
                                           "train: {steps: 4, checkpoint_every: 2, eval_every: 0, log_every: 1}\n"
                                           "resources: {cpus: 1}\n";
  const std::string disk = (scratch / "disk").string();
  // 300 KiB: less than one checkpoint of this model (about 1.6 MB).
  StatusOr<testing::SmallDiskRun> run = testing::RunOnSmallDisk(
      disk, "300k",
      "\"$1\" --config \"$2\" --checkpoint-dir $RUNG_DISK/checkpoints; code=$?; echo left:; "
      "ls -A $RUNG_DISK/checkpoints; exit $code",
      {RUNG_TRAIN_BINARY, (scratch / "trial.yaml").string()}, std::chrono::minutes(5));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  if (run->refused) GTEST_SKIP() << testing::kSmallDiskRefused << run->refusal;
  const SubprocessResult* result = &run->result;
  EXPECT_EQ(result->exit.signal, 0) << "rung-train must not abort: " << result->stderr_text;
  EXPECT_EQ(result->exit.code, 5) << result->stderr_text;
  EXPECT_THAT(result->stderr_text, HasSubstr("no space left on device at " + disk + "/checkpoints/"));
  const std::string left = result->stdout_text.substr(result->stdout_text.find("left:") + 5);
  EXPECT_EQ(left.find_first_not_of("\n"), std::string::npos) << "files left in the checkpoint folder:" << left;
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace rung
