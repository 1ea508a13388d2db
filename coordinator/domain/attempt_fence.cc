// coordinator/domain/attempt_fence.cc
#include "coordinator/domain/attempt_fence.h"

namespace rung::domain {

StatusOr<LiveAttempt> LoadLiveAttempt(Tables& tables, int64_t trial_id, int64_t attempt, std::string_view report,
                                      const AttemptRecord* read) {
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(trial_id));
  if (attempt == trial.attempt && IsLive(trial.state)) {
    if (read != nullptr && read->trial_id == trial_id && read->attempt == attempt) {
      return LiveAttempt{std::move(trial), *read};
    }
    RUNG_ASSIGN_OR_RETURN(AttemptRecord live, tables.attempts().Get(trial_id, attempt));
    return LiveAttempt{std::move(trial), std::move(live)};
  }

  const std::string rejected = tables.trials().Describe(trial) + ": " + std::string(report) + " from attempt " +
                               std::to_string(attempt) + " rejected: ";
  const std::string current = "the current attempt is " + std::to_string(trial.attempt) + " and the trial is " +
                              TrialStateName(trial.state);
  if (attempt > trial.attempt || attempt < 1) {
    return Status::FailedPrecondition(rejected + "there is no such attempt; " + current);
  }
  if (attempt < trial.attempt) {
    return Status::FailedPrecondition(rejected + "attempt " + std::to_string(trial.attempt) + " superseded it; " +
                                      current);
  }
  RUNG_ASSIGN_OR_RETURN(AttemptRecord ended, tables.attempts().Get(trial_id, attempt));
  return Status::FailedPrecondition(rejected + "that attempt already ended " + TrialStateName(ended.state) + " (" +
                                    ended.exit_reason + "); the trial is " + TrialStateName(trial.state));
}

Status CheckAttemptHolder(Tables& tables, int64_t trial_id, const AttemptRecord& attempt, const std::string& worker_id,
                          std::string_view report) {
  if (worker_id.empty() || worker_id == attempt.worker_id) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(trial_id));
  return Status::FailedPrecondition(tables.trials().Describe(trial) + ": " + std::string(report) + " from worker " +
                                    worker_id + " rejected: attempt " + std::to_string(attempt.attempt) +
                                    " was leased to worker " + attempt.worker_id +
                                    "; a worker reports only about the attempts leased to it");
}

Status CheckAttemptHolder(Tables& tables, int64_t trial_id, int64_t attempt, const std::string& worker_id,
                          std::string_view report) {
  if (worker_id.empty()) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(std::optional<AttemptRecord> stored, tables.attempts().Find(trial_id, attempt));
  if (!stored) return Status::Ok();
  return CheckAttemptHolder(tables, trial_id, *stored, worker_id, report);
}

StatusOr<bool> IsAppliedReport(Tables& tables, int64_t trial_id, int64_t attempt, TrialState outcome,
                               const std::string& report_digest) {
  return tables.attempts().EndedBy(trial_id, attempt, outcome, report_digest);
}

}  // namespace rung::domain
