// tests/worker/agent/trainer_process_test.cc
//
// TrainerProcess with real processes: fake trainers (shell scripts) for the launch contract and the
// parent-death signal, and the real rung-train for its records, SIGTERM -> exit 75 and a checkpoint.
#include "worker/agent/trainer_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/train/checkpoint.h"
#include "tests/worker/agent/agent_test_util.h"
#include "tests/worker/agent/read_to_exit.h"
#include "core/records/trainer_records.h"

namespace rung::agent {
namespace {

using nlohmann::json;
using testing::ScratchDir;
using testing::WriteScript;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

testing::Finished RunToEnd(TrainerProcess& trainer) { return testing::ReadToExit(trainer, std::chrono::minutes(5)); }

TrainerLaunch FakeTrainerLaunch(const ScratchDir& scratch, const std::string& script_body) {
  TrainerLaunch launch;
  launch.trainer_path = WriteScript(scratch.Path("fake-train.sh"), script_body);
  launch.config_path = scratch.Path("trial.json");
  launch.checkpoint_dir = scratch.Path("ckpt");
  launch.resume = "never";
  launch.threads = 3;
  launch.stderr_path = scratch.Path("trainer.log");
  return launch;
}

TEST(TrainerProcessTest, PassesArgumentsThreadsAndGpusAndSplitsStdoutFromStderr) {
  ScratchDir scratch;
  TrainerLaunch launch = FakeTrainerLaunch(scratch,
                                    "for arg in \"$@\"; do echo \"arg $arg\"; done\n"
                                    "echo \"omp $OMP_NUM_THREADS\"\n"
                                    "echo \"cuda [$CUDA_VISIBLE_DEVICES]\"\n"
                                    "echo 'to stderr' >&2\n"
                                    "printf 'unterminated'\n"
                                    "exit 4\n");
  launch.gpus = {1, 0};
  launch.extra_arguments = {"--stop-after-step", "5"};
  ::setenv("CUDA_VISIBLE_DEVICES", "6,7", 1);
  auto trainer = TrainerProcess::Start(launch);
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  testing::Finished finished = RunToEnd(**trainer);
  EXPECT_THAT(finished.output.stdout_lines,
              ElementsAre("arg --config", "arg " + launch.config_path, "arg --checkpoint-dir",
                          "arg " + launch.checkpoint_dir, "arg --resume", "arg never", "arg --threads", "arg 3",
                          "arg --stop-after-step", "arg 5", "omp 3", "cuda [7,6]", "unterminated"));
  EXPECT_THAT(finished.output.stderr_lines, ElementsAre("to stderr"));
  EXPECT_THAT(testing::ReadLines(launch.stderr_path), ElementsAre("to stderr"));
  EXPECT_EQ(finished.exit.exit_code, 4);
  EXPECT_EQ(finished.exit.signal, 0);
  EXPECT_EQ(finished.exit.ReportedCode(), 4);
}

TEST(TrainerProcessTest, AppendsToAnExistingLogAndFollowsOnlyTheNewLines) {
  ScratchDir scratch;
  TrainerLaunch launch = FakeTrainerLaunch(scratch, "echo 'second run' >&2\n");
  testing::WriteFile(launch.stderr_path, "first run\n");
  auto trainer = TrainerProcess::Start(launch);
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  testing::Finished finished = RunToEnd(**trainer);
  EXPECT_THAT(finished.output.stderr_lines, ElementsAre("second run"));
  EXPECT_THAT(testing::ReadLines(launch.stderr_path), ElementsAre("first run", "second run"));
}

TEST(TrainerProcessTest, ACrashIsAnExitBySignal) {
  ScratchDir scratch;
  auto trainer = TrainerProcess::Start(FakeTrainerLaunch(scratch, "kill -SEGV $$\n"));
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  testing::Finished finished = RunToEnd(**trainer);
  EXPECT_EQ(finished.exit.signal, SIGSEGV);
  EXPECT_EQ(finished.exit.ReportedCode(), -SIGSEGV);
  EXPECT_THAT(finished.exit.Describe(), HasSubstr("killed by signal 11"));
}

TEST(TrainerProcessTest, ATrainerThatCannotBeExecutedIsAnErrorOfStart) {
  ScratchDir scratch;
  TrainerLaunch launch = FakeTrainerLaunch(scratch, "exit 0\n");
  launch.trainer_path = scratch.Path("no-such-trainer");
  auto missing = TrainerProcess::Start(launch);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("No such file"));

  launch.trainer_path = "";
  EXPECT_EQ(TrainerProcess::Start(launch).status().code(), StatusCode::kInvalidArgument);
}

TEST(TrainerProcessTest, SignalsAreDeliveredAndTheChildStartsWithAnEmptyMask) {
  ScratchDir scratch;
  // The test process blocks SIGTERM here, as rung-worker does: the trainer must still receive it.
  sigset_t term, previous;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &previous);
  auto trainer = TrainerProcess::Start(
      FakeTrainerLaunch(scratch, "trap 'echo stopping; exit 75' TERM\necho ready\nwhile true; do sleep 0.02; done\n"));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  TrainerOutput output;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        (*trainer)->ReadOutput(std::chrono::milliseconds(50), &output);
        return !output.stdout_lines.empty();
      },
      std::chrono::seconds(10)));
  ASSERT_TRUE((*trainer)->Signal(SIGTERM).ok());
  testing::Finished finished = RunToEnd(**trainer);
  EXPECT_THAT(finished.output.stdout_lines, ElementsAre("stopping"));
  EXPECT_EQ(finished.exit.exit_code, 75);
  EXPECT_TRUE((*trainer)->Signal(SIGTERM).ok()) << "signalling a reaped trainer is harmless";
}

TEST(TrainerProcessTest, DestroyingARunningTrainerKillsAndReapsIt) {
  ScratchDir scratch;
  auto trainer = TrainerProcess::Start(FakeTrainerLaunch(scratch, "exec sleep 1000\n"));
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  const pid_t pid = (*trainer)->pid();
  trainer->reset();
  EXPECT_EQ(::kill(pid, 0), -1) << "pid " << pid << " still exists";
}

// The agent dies without a word (SIGKILL, OOM): its trainer must not train on as an orphan. An
// intermediate process starts a trainer and exits; this test process is the subreaper that the
// orphan is handed to, so it sees how the orphan ended.
TEST(TrainerProcessTest, ATrainerWhoseAgentDiesIsKilled) {
  ScratchDir scratch;
  TrainerLaunch launch = FakeTrainerLaunch(scratch, "exec sleep 1000\n");
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int pid_pipe[2];
  ASSERT_EQ(::pipe(pid_pipe), 0);
  const pid_t agent = ::fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    auto trainer = TrainerProcess::Start(launch);
    const pid_t trainer_pid = trainer.ok() ? (*trainer)->pid() : -1;
    [[maybe_unused]] ssize_t written = ::write(pid_pipe[1], &trainer_pid, sizeof(trainer_pid));
    ::_exit(0);  // no destructors: the trainer is left behind
  }
  ::close(pid_pipe[1]);
  pid_t trainer_pid = -1;
  ASSERT_EQ(::read(pid_pipe[0], &trainer_pid, sizeof(trainer_pid)), static_cast<ssize_t>(sizeof(trainer_pid)));
  ::close(pid_pipe[0]);
  ASSERT_GT(trainer_pid, 0);
  int agent_status = 0;
  ASSERT_EQ(::waitpid(agent, &agent_status, 0), agent);

  int trainer_status = 0;
  const bool reaped = testing::WaitUntil([&] { return ::waitpid(trainer_pid, &trainer_status, WNOHANG) == trainer_pid; },
                                         std::chrono::seconds(10));
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  if (!reaped) ::kill(trainer_pid, SIGKILL);
  ASSERT_TRUE(reaped) << "the orphaned trainer still runs";
  ASSERT_TRUE(WIFSIGNALED(trainer_status));
  EXPECT_EQ(WTERMSIG(trainer_status), SIGKILL);
}

// ------------------------------------------------------------------------------ real rung-train

class TrainerProcessTrainingTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef RUNG_TRAIN_BINARY
    GTEST_SKIP() << "rung-train is not built (RUNG_WITH_TORCH=OFF)";
#else
    launch_.trainer_path = RUNG_TRAIN_BINARY;
#endif
    launch_.config_path = scratch_.Path("trial.json");
    launch_.checkpoint_dir = scratch_.Path("attempt-1");
    launch_.stderr_path = scratch_.Path("trainer.log");
    launch_.threads = 2;
  }

  void WriteConfig(int64_t steps, int64_t log_every) {
    testing::WriteFile(launch_.config_path, testing::TinyTrialConfig(steps, log_every).dump());
  }

  ScratchDir scratch_;
  TrainerLaunch launch_;
};

TEST_F(TrainerProcessTrainingTest, ReadsEveryRecordOfARun) {
  WriteConfig(/*steps=*/20, /*log_every=*/1);
  auto trainer = TrainerProcess::Start(launch_);
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  testing::Finished finished = RunToEnd(**trainer);
  ASSERT_EQ(finished.exit.ReportedCode(), 0) << ::testing::PrintToString(finished.output.stderr_lines);

  std::vector<std::string_view> types;
  std::vector<int64_t> steps;
  for (const std::string& line : finished.output.stdout_lines) {
    StatusOr<records::TrainerRecord> record = records::DecodeRecord(line);
    ASSERT_TRUE(record.ok()) << line << ": " << record.status().ToString();
    types.push_back(records::RecordType(*record));
    if (const auto* step = std::get_if<records::StepRecord>(&*record)) steps.push_back(step->step);
    if (const auto* provenance = std::get_if<records::ProvenanceRecord>(&*record)) {
      EXPECT_EQ(provenance->threads, 2) << "the trainer runs on exactly its slots";
    }
  }
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.front(), "provenance");
  EXPECT_EQ(types.back(), "final");
  std::vector<int64_t> every_step(20);
  for (int64_t step = 1; step <= 20; ++step) every_step[step - 1] = step;
  EXPECT_EQ(steps, every_step);
  EXPECT_FALSE(finished.output.stderr_lines.empty()) << "rung-train reports its set-up on stderr";
  EXPECT_EQ(ListCheckpoints(launch_.checkpoint_dir).size(), 1u) << "the final checkpoint";
}

TEST_F(TrainerProcessTrainingTest, SigtermCheckpointsIntoTheGivenFolderAndExits75) {
  WriteConfig(/*steps=*/100000, /*log_every=*/1);
  auto trainer = TrainerProcess::Start(launch_);
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  TrainerOutput output;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        (*trainer)->ReadOutput(std::chrono::milliseconds(50), &output);
        for (const std::string& line : output.stdout_lines) {
          StatusOr<records::TrainerRecord> record = records::DecodeRecord(line);
          if (record.ok() && std::holds_alternative<records::StepRecord>(*record)) return true;
        }
        return false;
      },
      std::chrono::minutes(2)))
      << "no step record";
  ASSERT_TRUE((*trainer)->Signal(SIGTERM).ok());
  testing::Finished finished = RunToEnd(**trainer);
  EXPECT_EQ(finished.exit.ReportedCode(), 75);
  ASSERT_FALSE(finished.output.stdout_lines.empty());
  StatusOr<records::TrainerRecord> last = records::DecodeRecord(finished.output.stdout_lines.back());
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  const auto* preempted = std::get_if<records::PreemptedRecord>(&*last);
  ASSERT_NE(preempted, nullptr) << finished.output.stdout_lines.back();
  const std::vector<std::string> checkpoints = ListCheckpoints(launch_.checkpoint_dir);
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_EQ(preempted->checkpoint, checkpoints.back());
}

}  // namespace
}  // namespace rung::agent
