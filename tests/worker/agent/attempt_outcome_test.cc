// tests/worker/agent/attempt_outcome_test.cc
//
// rung-train's exit codes and records -> the outcome and reason of Complete.
#include "worker/agent/attempt_outcome.h"

#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung::agent {
namespace {

using ::testing::HasSubstr;

TrainerExit Exited(int code) { return TrainerExit{code, 0}; }
TrainerExit Killed(int signal) { return TrainerExit{0, signal}; }

TEST(AttemptOutcomeTest, ExitZeroWithAFinalRecordSucceeds) {
  AttemptRecords records;
  records.Add(R"({"type":"final","step":20,"val_loss":2.0})");
  AttemptEnd end = ClassifyTrainerExit(Exited(0), records, std::nullopt, {});
  EXPECT_EQ(end.outcome, v1::OUTCOME_SUCCEEDED);
  EXPECT_EQ(end.reason, "");
  EXPECT_EQ(end.exit_code, 0);
}

TEST(AttemptOutcomeTest, ExitZeroWithoutAFinalRecordFails) {
  AttemptEnd end = ClassifyTrainerExit(Exited(0), AttemptRecords(), std::nullopt, {});
  EXPECT_EQ(end.outcome, v1::OUTCOME_FAILED);
  EXPECT_THAT(end.reason, HasSubstr("without a final record"));
}

TEST(AttemptOutcomeTest, Exit75IsPreemptedWithTheCheckpointStep) {
  AttemptRecords records;
  records.Add(R"({"type":"preempted","step":30,"signal":15,"checkpoint":"/c/ckpt-0000000030.pt"})");
  AttemptEnd asked = ClassifyTrainerExit(Exited(75), records, std::string("worker shutting down (SIGTERM)"), {});
  EXPECT_EQ(asked.outcome, v1::OUTCOME_PREEMPTED);
  EXPECT_EQ(asked.reason, "worker shutting down (SIGTERM); checkpointed at step 30");
  EXPECT_EQ(asked.exit_code, 75);
  AttemptEnd unasked = ClassifyTrainerExit(Exited(75), records, std::nullopt, {});
  EXPECT_EQ(unasked.outcome, v1::OUTCOME_PREEMPTED);
  EXPECT_THAT(unasked.reason, HasSubstr("stopped by a signal"));
}

TEST(AttemptOutcomeTest, AFullDiskIsPreemptedNamingThePathNotAFailureOfTheTrial) {
  AttemptEnd end = ClassifyTrainerExit(
      Exited(kTrainerExitNoSpace), AttemptRecords(), std::nullopt,
      {"rung-train: RESOURCE_EXHAUSTED: no space left on device at /ck/ckpt-2.pt.tmp.1 (while writing it: No "
       "space left on device)"});
  EXPECT_EQ(end.outcome, v1::OUTCOME_PREEMPTED);
  EXPECT_EQ(end.exit_code, kTrainerExitNoSpace);
  EXPECT_THAT(end.reason, HasSubstr("no space left on device at /ck/ckpt-2.pt.tmp.1"));
  EXPECT_THAT(end.reason, HasSubstr("leases no trial until its disk has room"));
}

TEST(AttemptOutcomeTest, AKillAfterAPreemptionIsStillPreempted) {
  AttemptEnd end = ClassifyTrainerExit(Killed(SIGKILL), AttemptRecords(), std::string("worker shutting down"), {});
  EXPECT_EQ(end.outcome, v1::OUTCOME_PREEMPTED);
  EXPECT_EQ(end.exit_code, -SIGKILL);
}

TEST(AttemptOutcomeTest, FailuresCarryTheErrorRecordOrTheStderrTail) {
  AttemptRecords with_error;
  with_error.Add(R"({"type":"error","step":7,"reason":"non-finite training loss (nan) at step 7"})");
  AttemptEnd nonfinite = ClassifyTrainerExit(Exited(3), with_error, std::nullopt, {"ignored"});
  EXPECT_EQ(nonfinite.outcome, v1::OUTCOME_FAILED);
  EXPECT_EQ(nonfinite.reason, "rung-train: training failed (exit code 3): non-finite training loss (nan) at step 7");

  AttemptEnd bad_config = ClassifyTrainerExit(Exited(2), AttemptRecords(), std::nullopt,
                                              {"rung-train: LibTorch 2.1", "", "rung-train: model.d_model: must be > 0"});
  EXPECT_EQ(bad_config.reason,
            "rung-train: bad config (exit code 2): rung-train: LibTorch 2.1 | rung-train: model.d_model: must be > 0");

  AttemptEnd crash = ClassifyTrainerExit(Killed(SIGSEGV), AttemptRecords(), std::nullopt, {"boom"});
  EXPECT_EQ(crash.outcome, v1::OUTCOME_FAILED);
  EXPECT_EQ(crash.exit_code, -SIGSEGV);
  EXPECT_THAT(crash.reason, HasSubstr("crashed (killed by signal 11"));
  EXPECT_THAT(crash.reason, HasSubstr(": boom"));
}

}  // namespace
}  // namespace rung::agent
