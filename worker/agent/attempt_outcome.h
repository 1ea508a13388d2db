// worker/agent/attempt_outcome.h
//
// How an attempt ended, from its trainer's exit (rung-train's exit codes, worker/train_main.cc) and
// records:
//   exit 0 with a final record                  SUCCEEDED
//   exit 75 (stopped after a checkpoint)        PREEMPTED
//   killed after the agent asked it to stop for
//   a preemption and the grace period ran out   PREEMPTED (resumes from its last checkpoint)
//   anything else                               FAILED: 0 without a final record, 2 bad config,
//                                               3 non-finite loss, 4 data or checkpoint unusable,
//                                               1 other, 127 not executable, or a signal (a crash)
// The reason of a FAILED attempt is the last error record's, else the last lines of the trainer's
// stderr, after what the exit code means.
//
// Example:
//   AttemptEnd end = ClassifyTrainerExit(*exit, records, preempt_reason, stderr_tail);
//   complete.set_outcome(end.outcome);
//   complete.set_reason(end.reason);
//
// Thread safety: reentrant.
#pragma once

#include <deque>
#include <optional>
#include <string>

#include "proto/rung.pb.h"
#include "worker/agent/trainer_process.h"
#include "worker/agent/attempt_records.h"

namespace rung::agent {

inline constexpr int kTrainerExitPreempted = 75;
// rung-train's exit for "no space left on device at PATH": the machine, not the trial. The attempt is
// reported PREEMPTED (it resumes from its last checkpoint without spending a retry) and the agent
// stops leasing until the disk has room (worker/agent/disk_space.h).
inline constexpr int kTrainerExitNoSpace = 5;

struct AttemptEnd {
  v1::AttemptOutcome outcome = v1::OUTCOME_FAILED;
  std::string reason;  // "" for SUCCEEDED
  int exit_code = 0;   // CompleteRequest.exit_code: the exit code, or -signal
};

// `preempt_reason` is set when the agent asked the trainer to stop for a preemption (its own
// shutdown); `stderr_tail` holds the trainer's last stderr lines, oldest first.
AttemptEnd ClassifyTrainerExit(const TrainerExit& exit, const AttemptRecords& records,
                               const std::optional<std::string>& preempt_reason,
                               const std::deque<std::string>& stderr_tail);

}  // namespace rung::agent
