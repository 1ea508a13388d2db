// tests/worker/agent/trainer_gang_test.cc
//
// TrainerGang with real processes (fake trainers: shell scripts that read their --rank): each rank's
// arguments, threads and GPUs, rank 0's stdout as the records and the others' lines as prefixed
// stderr, and all or nothing when a rank dies.
#include "worker/agent/trainer_gang.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/worker/agent/agent_test_util.h"
#include "tests/worker/agent/read_to_exit.h"

namespace rung::agent {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ScratchDir;
using ::testing::StartsWith;
using testing::WriteScript;

// The fake trainer's preamble: RANK from --rank (0 without one).
constexpr char kReadRank[] =
    "RANK=0\n"
    "while [ $# -gt 0 ]; do if [ \"$1\" = --rank ]; then RANK=$2; fi; shift; done\n";

TrainerLaunch FakeLaunch(const ScratchDir& scratch, const std::string& body) {
  TrainerLaunch launch;
  launch.trainer_path = WriteScript(scratch.Path("fake-train.sh"), kReadRank + body);
  launch.config_path = scratch.Path("trial.json");
  launch.checkpoint_dir = scratch.Path("ckpt");
  launch.threads = 4;
  launch.gpus = {0, 1};
  launch.stderr_path = scratch.Path("trainer.log");
  return launch;
}

// A gang of `ranks` fake trainers running `body`; null (and a failed expectation) when it did not start.
std::unique_ptr<TrainerGang> StartedGang(const ScratchDir& scratch, const std::string& body, int ranks) {
  auto gang = TrainerGang::Start(FakeLaunch(scratch, body), ranks);
  EXPECT_TRUE(gang.ok()) << gang.status().ToString();
  return gang.ok() ? std::move(*gang) : nullptr;
}

testing::Finished RunToEnd(TrainerGang& gang) { return testing::ReadToExit(gang, std::chrono::minutes(1)); }

TEST(TrainerGangTest, EachRankGetsItsShareAndOnlyRankZeroPrintsRecords) {
  ScratchDir scratch;
  std::unique_ptr<TrainerGang> gang =
      StartedGang(scratch,
                  "if [ \"$RANK\" = 0 ]; then echo '{\"type\":\"final\"}'; fi\n"
                  "echo \"rank $RANK omp $OMP_NUM_THREADS cuda $CUDA_VISIBLE_DEVICES\" >&2\n"
                  "[ \"$RANK\" = 1 ] && echo 'not a record'\n"
                  "exit 0\n",
                  2);
  ASSERT_NE(gang, nullptr);
  EXPECT_EQ(gang->threads_per_rank(), 2);
  testing::Finished finished = RunToEnd(*gang);
  EXPECT_THAT(finished.output.stdout_lines, ElementsAre("{\"type\":\"final\"}"));
  EXPECT_THAT(finished.output.stderr_lines, Contains("rank 0 omp 2 cuda 0"));
  EXPECT_THAT(finished.output.stderr_lines, Contains("[rank 1] rank 1 omp 2 cuda 1"));
  EXPECT_THAT(finished.output.stderr_lines, Contains("[rank 1] not a record"));
  EXPECT_EQ(finished.exit.ReportedCode(), 0);
  EXPECT_THAT(gang->broken_by(), IsEmpty());
  EXPECT_THAT(testing::ReadLines(scratch.Path("trainer-rank1.log")), ElementsAre("rank 1 omp 2 cuda 1"));
}

TEST(TrainerGangTest, ARankThatDiesStopsTheOthersAndItsExitIsTheGangs) {
  ScratchDir scratch;
  // Rank 1 crashes; rank 0 would train for ten minutes.
  std::unique_ptr<TrainerGang> gang = StartedGang(scratch,
                                                  "if [ \"$RANK\" = 1 ]; then kill -9 $$; fi\n"
                                                  "echo '{\"type\":\"provenance\"}'\n"
                                                  "exec sleep 600\n",
                                                  2);
  ASSERT_NE(gang, nullptr);
  testing::Finished finished = RunToEnd(*gang);
  EXPECT_EQ(finished.exit.signal, SIGKILL);
  EXPECT_THAT(gang->broken_by(), StartsWith("rank 1 killed by signal 9"));
}

TEST(TrainerGangTest, RanksThatStopTogetherAfterASignalDoNotBreakTheGang) {
  ScratchDir scratch;
  std::unique_ptr<TrainerGang> gang = StartedGang(scratch,
                                                  "trap 'exit 75' TERM\n"
                                                  "echo ready\n"
                                                  "while :; do sleep 0.05; done\n",
                                                  3);
  ASSERT_NE(gang, nullptr);
  TrainerOutput output;
  while (output.stdout_lines.empty()) ASSERT_TRUE(gang->ReadOutput(std::chrono::milliseconds(100), &output));
  ASSERT_TRUE(gang->Signal(SIGTERM).ok());
  testing::Finished finished = RunToEnd(*gang);
  EXPECT_EQ(finished.exit.ReportedCode(), 75);
  EXPECT_THAT(gang->broken_by(), IsEmpty());
}

}  // namespace
}  // namespace rung::agent
