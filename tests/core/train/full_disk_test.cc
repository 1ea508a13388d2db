// rung-train on a full disk: a checkpoint that does not fit is an error value, not an abort. The
// small full disk is a tmpfs in a private mount namespace (`unshare -m`); where the machine refuses
// one, the test says so and is skipped, never passed.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/subprocess.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kNoNamespace = 99;  // the script's exit when unshare or mount is refused

TEST(FullDiskTrainingTest, ACheckpointThatDoesNotFitExitsFiveNamingThePathAndLeavesNothingHalfWritten) {
  const fs::path scratch = fs::path(::testing::TempDir()) / ("rung-full-disk-" + std::to_string(::getpid()));
  fs::create_directories(scratch / "disk");
  std::ofstream(scratch / "trial.yaml") << "data: {source: builtin, seq_len: 64}\n"
                                           "model: {layers: 2, d_model: 64, heads: 2}\n"
                                           "train: {steps: 4, checkpoint_every: 2, eval_every: 0, log_every: 1}\n"
                                           "resources: {cpus: 1}\n";
  const std::string disk = (scratch / "disk").string();
  // 300 KiB: less than one checkpoint of this model (about 1.6 MB).
  const std::string script = "mount -t tmpfs -o size=300k rung-full-disk " + disk + " || exit " +
                             std::to_string(kNoNamespace) + "; \"$0\" --config \"$1\" --checkpoint-dir " + disk +
                             "/checkpoints; code=$?; echo left:; ls -A " + disk + "/checkpoints; exit $code";
  SubprocessOptions options;
  options.argv = {"unshare", "-m", "sh", "-c", script, RUNG_TRAIN_BINARY, (scratch / "trial.yaml").string()};
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> result = Subprocess::Run(options, std::chrono::minutes(5));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  if (result->exit.code == kNoNamespace || (result->exit.code == 1 && result->stdout_text.empty())) {
    GTEST_SKIP() << "skipped: cannot create a mount namespace (unshare -m and a tmpfs): " << result->stderr_text;
  }
  EXPECT_EQ(result->exit.signal, 0) << "rung-train must not abort: " << result->stderr_text;
  EXPECT_EQ(result->exit.code, 5) << result->stderr_text;
  EXPECT_THAT(result->stderr_text, HasSubstr("no space left on device at " + disk + "/checkpoints/"));
  const std::string left = result->stdout_text.substr(result->stdout_text.find("left:") + 5);
  EXPECT_EQ(left.find_first_not_of("\n"), std::string::npos) << "files left in the checkpoint folder:" << left;
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace rung
