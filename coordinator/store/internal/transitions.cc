#include "coordinator/store/internal/transitions.h"

#include "coordinator/store/event_log.h"
#include "coordinator/store/internal/records.h"

namespace rung::store_internal {
namespace {

constexpr char kCoordinator[] = "coordinator";

std::optional<int64_t> AttemptOrNull(int64_t attempt) {
  return attempt > 0 ? std::optional<int64_t>(attempt) : std::nullopt;
}

struct TrialCounts {
  int64_t total = 0;
  int64_t failed = 0;      // FAILED for good
  int64_t succeeded = 0;
  int64_t unfinished = 0;  // not SUCCEEDED, FAILED or CANCELLED
};

StatusOr<TrialCounts> CountTrials(Database& db, int64_t sweep_id) {
  StatusOr<Statement> count = db.Prepare(
      "SELECT COUNT(*), "
      "       COALESCE(SUM(state = 'FAILED'), 0), "
      "       COALESCE(SUM(state = 'SUCCEEDED'), 0), "
      "       COALESCE(SUM(state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED')), 0) "
      "FROM trials WHERE sweep_id = ?");
  if (!count.ok()) return count.status();
  count->Bind(1, sweep_id);
  StatusOr<bool> row = count->Step();
  if (!row.ok()) return row.status();
  TrialCounts counts;
  counts.total = count->ColumnInt64(0);
  counts.failed = count->ColumnInt64(1);
  counts.succeeded = count->ColumnInt64(2);
  counts.unfinished = count->ColumnInt64(3);
  return counts;
}

// The sweep's trials FAILED for good: an index range of (sweep_id, state), not a scan of the sweep.
StatusOr<int64_t> CountFailed(Database& db, int64_t sweep_id) {
  return db.QueryInt64("SELECT COUNT(*) FROM trials WHERE sweep_id = ? AND state = 'FAILED'", sweep_id);
}

// Whether any trial of the sweep is unfinished: one index probe per unfinished state.
StatusOr<bool> HasUnfinished(Database& db, int64_t sweep_id) {
  StatusOr<int64_t> unfinished = db.QueryInt64(
      "SELECT EXISTS (SELECT 1 FROM trials WHERE sweep_id = ? "
      "AND state IN ('PENDING', 'LEASED', 'RUNNING', 'PREEMPTED', 'STALE'))",
      sweep_id);
  if (!unfinished.ok()) return unfinished.status();
  return *unfinished != 0;
}

}  // namespace

Status AppendEvent(Database& db, const EventRecord& event) {
  StatusOr<Statement> insert = db.Prepare(
      "INSERT INTO events(at, sweep_id, trial_id, attempt, kind, from_state, to_state, actor, reason) "
      "VALUES (?, ?, ?, ?, ?, NULLIF(?, ''), NULLIF(?, ''), ?, ?)");
  if (!insert.ok()) return insert.status();
  insert->BindAll(ToUnixMicros(event.at), event.sweep_id, event.trial_id, event.attempt, event.kind,
                  event.from_state, event.to_state, event.actor, event.reason);
  return insert->Run();
}

Status MoveTrial(Database& db, TrialRecord& trial, TrialState to, const Cause& cause, Timestamp now) {
  StatusOr<Statement> update = db.Prepare("UPDATE trials SET state = ?, updated_at = ? WHERE id = ?");
  if (!update.ok()) return update.status();
  update->BindAll(TrialStateName(to), ToUnixMicros(now), trial.id);
  RUNG_RETURN_IF_ERROR(update->Run());
  EventRecord event;
  event.at = now;
  event.sweep_id = trial.sweep_id;
  event.trial_id = trial.id;
  event.attempt = AttemptOrNull(trial.attempt);
  event.kind = event_kind::kTrialState;
  event.from_state = TrialStateName(trial.state);
  event.to_state = TrialStateName(to);
  event.actor = cause.actor;
  event.reason = cause.reason;
  trial.state = to;
  trial.updated_at = now;
  return AppendEvent(db, event);
}

Status MoveSweep(Database& db, SweepRecord& sweep, SweepState to, const Cause& cause, Timestamp now) {
  StatusOr<Statement> update = db.Prepare("UPDATE sweeps SET state = ?, updated_at = ? WHERE id = ?");
  if (!update.ok()) return update.status();
  update->BindAll(SweepStateName(to), ToUnixMicros(now), sweep.id);
  RUNG_RETURN_IF_ERROR(update->Run());
  EventRecord event;
  event.at = now;
  event.sweep_id = sweep.id;
  event.kind = event_kind::kSweepState;
  event.from_state = SweepStateName(sweep.state);
  event.to_state = SweepStateName(to);
  event.actor = cause.actor;
  event.reason = cause.reason;
  sweep.state = to;
  sweep.updated_at = now;
  return AppendEvent(db, event);
}

Status EndAttempt(Database& db, const TrialRecord& trial, TrialState outcome, const std::string& reason,
                  const std::string& report_digest, Timestamp now) {
  StatusOr<Statement> update = db.Prepare(
      "UPDATE attempts SET state = ?, ended_at = ?, exit_reason = ?, report_digest = NULLIF(?, '') "
      "WHERE trial_id = ? AND attempt = ?");
  if (!update.ok()) return update.status();
  update->BindAll(TrialStateName(outcome), ToUnixMicros(now), reason, report_digest, trial.id, trial.attempt);
  RUNG_RETURN_IF_ERROR(update->Run());
  if (db.ChangedRows() != 1) {
    return Status::Internal("trial " + std::to_string(trial.id) + " has no attempt " + std::to_string(trial.attempt));
  }
  return Status::Ok();
}

Status RequeueThrough(Database& db, TrialRecord& trial, TrialState via, const Cause& cause, Timestamp now) {
  RUNG_RETURN_IF_ERROR(MoveTrial(db, trial, via, cause, now));
  const std::string attempt = std::to_string(trial.attempt);
  return MoveTrial(db, trial, TrialState::kPending,
                   {kCoordinator, "requeued after attempt " + attempt + " ended " + TrialStateName(via) +
                                      "; the next attempt may resume from attempt " + attempt + "'s checkpoints"},
                   now);
}

Status RequeueByUser(Database& db, TrialRecord& trial, const Cause& cause, Timestamp now) {
  StatusOr<Statement> reset = db.Prepare("UPDATE trials SET failures = 0 WHERE id = ?");
  if (!reset.ok()) return reset.status();
  reset->Bind(1, trial.id);
  RUNG_RETURN_IF_ERROR(reset->Run());
  trial.failures = 0;
  return MoveTrial(db, trial, TrialState::kPending, cause, now);
}

Status CancelTrial(Database& db, TrialRecord& trial, const Cause& cause, Timestamp now) {
  if (IsLive(trial.state)) {
    RUNG_RETURN_IF_ERROR(EndAttempt(db, trial, TrialState::kCancelled, cause.reason, /*report_digest=*/"", now));
  }
  return MoveTrial(db, trial, TrialState::kCancelled, cause, now);
}

Status SettleSweep(Database& db, int64_t sweep_id, const std::string& actor, Timestamp now) {
  StatusOr<SweepRecord> sweep = LoadSweep(db, sweep_id);
  if (!sweep.ok()) return sweep.status();
  if (sweep->state == SweepState::kCancelled) return Status::Ok();
  // Settling runs on every trial that ends: decide with index probes (cost independent of the
  // sweep's size) and count the whole sweep only for the reason of a state change.
  StatusOr<int64_t> failed = CountFailed(db, sweep_id);
  if (!failed.ok()) return failed.status();
  StatusOr<bool> unfinished = HasUnfinished(db, sweep_id);
  if (!unfinished.ok()) return unfinished.status();

  SweepState target;
  if (*failed >= sweep->policy.max_failed) {
    target = SweepState::kFailed;
  } else if (!*unfinished) {
    target = *failed == 0 ? SweepState::kSucceeded : SweepState::kFailed;
  } else {
    target = sweep->state == SweepState::kPaused ? SweepState::kPaused : SweepState::kActive;
  }
  if (target == sweep->state) return Status::Ok();

  StatusOr<TrialCounts> counts = CountTrials(db, sweep_id);
  if (!counts.ok()) return counts.status();
  std::string reason;
  if (counts->failed >= sweep->policy.max_failed) {
    reason = std::to_string(counts->failed) + " trials failed for good (policy.max_failed is " +
             std::to_string(sweep->policy.max_failed) + "): no new leases until a retry";
  } else if (counts->unfinished == 0) {
    reason = "every trial finished: " + std::to_string(counts->succeeded) + " of " + std::to_string(counts->total) +
             " succeeded, " + std::to_string(counts->failed) + " failed for good";
  } else {
    reason = std::to_string(counts->unfinished) + " trials to run";
  }
  return MoveSweep(db, *sweep, target, {actor, reason}, now);
}

}  // namespace rung::store_internal
