// worker/agent/attempt_outcome.cc
#include "worker/agent/attempt_outcome.h"

namespace rung::agent {
namespace {

constexpr size_t kMaxReasonBytes = 2000;
constexpr int kStderrLinesInReason = 3;

// What an exit code of rung-train means (worker/train_main.cc).
std::string ExitMeaning(const TrainerExit& exit) {
  if (exit.signal != 0) return "rung-train crashed (" + exit.Describe() + ")";
  switch (exit.exit_code) {
    case 0: return "rung-train exited 0 without a final record";
    case 2: return "rung-train: bad config (exit code 2)";
    case 3: return "rung-train: training failed (exit code 3)";
    case 4: return "rung-train: data or checkpoint unusable (exit code 4)";
    case kTrainerExitNoSpace: return "rung-train: no space left on device (exit code 5)";
    case 127: return "rung-train could not be executed (exit code 127)";
    default: return "rung-train failed (" + exit.Describe() + ")";
  }
}

// The last few non-empty stderr lines, joined.
std::string StderrSummary(const std::deque<std::string>& tail) {
  std::string summary;
  int taken = 0;
  for (auto line = tail.rbegin(); line != tail.rend() && taken < kStderrLinesInReason; ++line) {
    if (line->find_first_not_of(" \t") == std::string::npos) continue;
    summary = *line + (summary.empty() ? "" : " | " + summary);
    ++taken;
  }
  return summary;
}

}  // namespace

AttemptEnd ClassifyTrainerExit(const TrainerExit& exit, const AttemptRecords& records,
                               const std::optional<std::string>& preempt_reason,
                               const std::deque<std::string>& stderr_tail) {
  AttemptEnd end;
  end.exit_code = exit.ReportedCode();
  if (exit.signal == 0 && exit.exit_code == 0 && records.has_final()) {
    end.outcome = v1::OUTCOME_SUCCEEDED;
    return end;
  }
  if (exit.signal == 0 && exit.exit_code == kTrainerExitPreempted) {
    end.outcome = v1::OUTCOME_PREEMPTED;
    const std::string at = records.checkpoint() ? " at step " + std::to_string(records.checkpoint()->step) : "";
    end.reason = preempt_reason ? *preempt_reason + "; checkpointed" + at
                                : "rung-train stopped by a signal after a checkpoint" + at;
    return end;
  }
  if (exit.signal == 0 && exit.exit_code == kTrainerExitNoSpace) {
    // The machine's disk, not the trial: resumed elsewhere (or here once there is room), no retry spent.
    end.outcome = v1::OUTCOME_PREEMPTED;
    const std::string detail = records.error_reason() ? *records.error_reason() : StderrSummary(stderr_tail);
    end.reason = ExitMeaning(exit) + (detail.empty() ? "" : ": " + detail) +
                 "; this worker leases no trial until its disk has room";
    if (end.reason.size() > kMaxReasonBytes) end.reason = end.reason.substr(0, kMaxReasonBytes - 3) + "...";
    return end;
  }
  if (exit.signal != 0 && preempt_reason) {
    end.outcome = v1::OUTCOME_PREEMPTED;
    end.reason = *preempt_reason + "; rung-train did not stop in time and was " + exit.Describe() +
                 " (resumes from its last checkpoint)";
    return end;
  }
  end.outcome = v1::OUTCOME_FAILED;
  end.reason = ExitMeaning(exit);
  const std::string detail = records.error_reason() ? *records.error_reason() : StderrSummary(stderr_tail);
  if (!detail.empty()) end.reason += ": " + detail;
  if (end.reason.size() > kMaxReasonBytes) end.reason = end.reason.substr(0, kMaxReasonBytes - 3) + "...";
  return end;
}

}  // namespace rung::agent
