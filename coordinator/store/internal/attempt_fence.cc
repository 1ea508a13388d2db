#include "coordinator/store/internal/attempt_fence.h"

#include "coordinator/store/internal/records.h"

namespace rung::store_internal {

StatusOr<LiveAttempt> LoadLiveAttempt(Database& db, int64_t trial_id, int64_t attempt, std::string_view report,
                                      const AttemptRecord* read) {
  StatusOr<TrialRecord> trial = LoadTrialHeader(db, trial_id);
  if (!trial.ok()) return trial.status();
  if (attempt == trial->attempt && IsLive(trial->state)) {
    if (read != nullptr && read->trial_id == trial_id && read->attempt == attempt) {
      return LiveAttempt{std::move(trial).value(), *read};
    }
    StatusOr<AttemptRecord> live = LoadAttempt(db, trial_id, attempt);
    if (!live.ok()) return live.status();
    return LiveAttempt{std::move(trial).value(), std::move(live).value()};
  }

  const std::string rejected = DescribeTrial(db, *trial) + ": " + std::string(report) + " from attempt " +
                               std::to_string(attempt) + " rejected: ";
  const std::string current = "the current attempt is " + std::to_string(trial->attempt) + " and the trial is " +
                              TrialStateName(trial->state);
  if (attempt > trial->attempt || attempt < 1) {
    return Status::FailedPrecondition(rejected + "there is no such attempt; " + current);
  }
  if (attempt < trial->attempt) {
    return Status::FailedPrecondition(rejected + "attempt " + std::to_string(trial->attempt) + " superseded it; " +
                                      current);
  }
  StatusOr<AttemptRecord> ended = LoadAttempt(db, trial_id, attempt);
  if (!ended.ok()) return ended.status();
  return Status::FailedPrecondition(rejected + "that attempt already ended " + TrialStateName(ended->state) + " (" +
                                    ended->exit_reason + "); the trial is " + TrialStateName(trial->state));
}

Status CheckAttemptHolder(Database& db, int64_t trial_id, const AttemptRecord& attempt, const std::string& worker_id,
                          std::string_view report) {
  if (worker_id.empty() || worker_id == attempt.worker_id) return Status::Ok();
  StatusOr<TrialRecord> trial = LoadTrial(db, trial_id);
  if (!trial.ok()) return trial.status();
  return Status::FailedPrecondition(DescribeTrial(db, *trial) + ": " + std::string(report) + " from worker " +
                                    worker_id + " rejected: attempt " + std::to_string(attempt.attempt) +
                                    " was leased to worker " + attempt.worker_id +
                                    "; a worker reports only about the attempts leased to it");
}

Status CheckAttemptHolder(Database& db, int64_t trial_id, int64_t attempt, const std::string& worker_id,
                          std::string_view report) {
  if (worker_id.empty()) return Status::Ok();
  StatusOr<std::optional<AttemptRecord>> stored =
      SelectOne<AttemptRecord>(db, "WHERE trial_id = ? AND attempt = ?", trial_id, attempt);
  if (!stored.ok()) return stored.status();
  if (!*stored) return Status::Ok();
  return CheckAttemptHolder(db, trial_id, **stored, worker_id, report);
}

StatusOr<bool> IsAppliedReport(Database& db, int64_t trial_id, int64_t attempt, TrialState outcome,
                               const std::string& report_digest) {
  StatusOr<Statement> query = db.Prepare(
      "SELECT 1 FROM attempts WHERE trial_id = ? AND attempt = ? AND state = ? AND report_digest = ?");
  if (!query.ok()) return query.status();
  query->BindAll(trial_id, attempt, TrialStateName(outcome), report_digest);
  return query->Step();
}

}  // namespace rung::store_internal
