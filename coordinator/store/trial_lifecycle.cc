#include "coordinator/store/trial_lifecycle.h"

#include <filesystem>

#include "coordinator/store/event_log.h"
#include "coordinator/store/internal/attempt_fence.h"
#include "coordinator/store/internal/records.h"
#include "coordinator/store/internal/transitions.h"
#include "core/data/sha256.h"

namespace rung {
namespace {

using store_internal::Cause;
using store_internal::LiveAttempt;

constexpr char kCoordinator[] = "coordinator";

std::string WorkerActor(const std::string& worker_id) { return "worker:" + worker_id; }

// The digest that recognises a repeated report: its kind and its content.
std::string ReportDigest(const std::string& kind, const std::string& content) {
  return Sha256Hex(kind + "\n" + content);
}

nlohmann::json ResultsJson(const TrialResults& results) {
  nlohmann::json summaries = nlohmann::json::array();
  for (const SummaryValue& summary : results.summaries) {
    summaries.push_back({summary.name, summary.value, summary.step ? nlohmann::json(*summary.step) : nullptr});
  }
  nlohmann::json learned = nlohmann::json::array();
  for (const LearnedParamValue& param : results.learned_params) {
    learned.push_back({param.step, param.name, param.layer, param.head, param.index, param.value});
  }
  nlohmann::json diagnostics = nlohmann::json::array();
  for (const Diagnostic& diagnostic : results.diagnostics) diagnostics.push_back({diagnostic.name, diagnostic.value});
  return {{"summaries", summaries}, {"learned_params", learned}, {"diagnostics", diagnostics}};
}

Status TouchWorker(Database& db, const std::string& worker_id, Timestamp now) {
  StatusOr<Statement> touch = db.Prepare("UPDATE workers SET last_seen_at = ? WHERE id = ?");
  if (!touch.ok()) return touch.status();
  touch->BindAll(ToUnixMicros(now), worker_id);
  return touch->Run();
}

std::string CheckpointDir(const std::string& artifact_root, const std::string& sweep_name, int64_t trial_index,
                          int64_t attempt) {
  return (std::filesystem::path(artifact_root) / sweep_name / std::to_string(trial_index) /
          ("attempt-" + std::to_string(attempt)))
      .string();
}

// Writes what a successful attempt reported. Rows are replaced when written again (same key).
Status InsertResults(Database& db, int64_t trial_id, int64_t attempt, const TrialResults& results) {
  StatusOr<Statement> summary = db.Prepare(
      "INSERT OR REPLACE INTO summaries(trial_id, name, value, step, attempt) VALUES (?, ?, ?, ?, ?)");
  if (!summary.ok()) return summary.status();
  for (const SummaryValue& value : results.summaries) {
    summary->Reset();
    summary->BindAll(trial_id, value.name, value.value, value.step, attempt);
    RUNG_RETURN_IF_ERROR(summary->Run());
  }
  StatusOr<Statement> learned = db.Prepare(
      "INSERT OR REPLACE INTO learned_params(trial_id, attempt, step, name, layer, head, idx, value) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  if (!learned.ok()) return learned.status();
  for (const LearnedParamValue& param : results.learned_params) {
    learned->Reset();
    learned->BindAll(trial_id, attempt, param.step, param.name, param.layer, param.head, param.index, param.value);
    RUNG_RETURN_IF_ERROR(learned->Run());
  }
  StatusOr<Statement> diagnostic =
      db.Prepare("INSERT OR REPLACE INTO diagnostics(trial_id, attempt, name, json) VALUES (?, ?, ?, ?)");
  if (!diagnostic.ok()) return diagnostic.status();
  for (const Diagnostic& entry : results.diagnostics) {
    diagnostic->Reset();
    diagnostic->BindAll(trial_id, attempt, entry.name, entry.value.dump());
    RUNG_RETURN_IF_ERROR(diagnostic->Run());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::optional<Lease>> TrialLifecycle::LeaseNextTrial(const std::string& worker_id, int64_t free_cpus,
                                                              int64_t free_gpus) {
  const StoreOptions& options = store_.options();
  return store_.Write([&](Database& db, Timestamp now) -> StatusOr<std::optional<Lease>> {
    StatusOr<std::optional<WorkerRecord>> worker =
        store_internal::SelectOne<WorkerRecord>(db, "WHERE id = ?", worker_id);
    if (!worker.ok()) return worker.status();
    if (!*worker) return Status::NotFound("worker " + worker_id + " is not registered: register it before leasing");
    RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));

    StatusOr<std::optional<TrialRecord>> next = store_internal::SelectOne<TrialRecord>(
        db,
        "JOIN sweeps ON sweeps.id = trials.sweep_id "
        "WHERE trials.state = 'PENDING' AND sweeps.state = 'ACTIVE' AND trials.cpus <= ? AND trials.gpus <= ? "
        "ORDER BY trials.priority DESC, trials.id LIMIT 1",
        free_cpus, free_gpus);
    if (!next.ok()) return next.status();
    if (!*next) return std::optional<Lease>();
    TrialRecord& trial = **next;
    StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, trial.sweep_id);
    if (!sweep.ok()) return sweep.status();

    Lease lease;
    lease.trial_id = trial.id;
    lease.sweep_id = sweep->id;
    lease.sweep_name = sweep->name;
    lease.trial_index = trial.trial_index;
    lease.attempt = trial.attempt + 1;
    lease.config = trial.cell.config;
    lease.checkpoint_dir = CheckpointDir(options.artifact_root, sweep->name, trial.trial_index, lease.attempt);
    lease.lease_expires_at = now + options.lease_duration;
    StatusOr<std::vector<AttemptRecord>> previous = store_internal::Select<AttemptRecord>(
        db, "WHERE trial_id = ? ORDER BY attempt DESC", trial.id);
    if (!previous.ok()) return previous.status();
    for (const AttemptRecord& earlier : *previous) {
      lease.resume_from.push_back({earlier.attempt, earlier.state, earlier.checkpoint_dir});
    }

    StatusOr<Statement> next_attempt = db.Prepare("UPDATE trials SET attempt = ? WHERE id = ?");
    if (!next_attempt.ok()) return next_attempt.status();
    next_attempt->BindAll(lease.attempt, trial.id);
    RUNG_RETURN_IF_ERROR(next_attempt->Run());
    trial.attempt = lease.attempt;
    StatusOr<Statement> insert = db.Prepare(
        "INSERT INTO attempts(trial_id, attempt, worker_id, state, leased_at, lease_expires_at, checkpoint_dir) "
        "VALUES (?, ?, ?, 'LEASED', ?, ?, ?)");
    if (!insert.ok()) return insert.status();
    insert->BindAll(trial.id, lease.attempt, worker_id, ToUnixMicros(now), ToUnixMicros(lease.lease_expires_at),
                    lease.checkpoint_dir);
    RUNG_RETURN_IF_ERROR(insert->Run());
    RUNG_RETURN_IF_ERROR(store_internal::MoveTrial(
        db, trial, TrialState::kLeased,
        {WorkerActor(worker_id), "leased by worker " + worker_id + " as attempt " + std::to_string(lease.attempt)},
        now));
    return std::optional<Lease>(std::move(lease));
  });
}

Status TrialLifecycle::MarkRunning(int64_t trial_id, int64_t attempt, const nlohmann::json& provenance) {
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, "running report");
    if (!live.ok()) return live.status();
    if (live->trial.state == TrialState::kRunning) return Status::Ok();  // a repeated report
    StatusOr<Statement> update = db.Prepare(
        "UPDATE attempts SET state = 'RUNNING', started_at = ?, provenance = ? WHERE trial_id = ? AND attempt = ?");
    if (!update.ok()) return update.status();
    update->BindAll(ToUnixMicros(now), provenance.is_null() ? std::optional<std::string>() : provenance.dump(),
                    trial_id, attempt);
    RUNG_RETURN_IF_ERROR(update->Run());
    const std::string& worker_id = live->attempt.worker_id;
    RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));
    return store_internal::MoveTrial(db, live->trial, TrialState::kRunning,
                                     {WorkerActor(worker_id), "the trainer started on worker " + worker_id}, now);
  });
}

StatusOr<HeartbeatReply> TrialLifecycle::Heartbeat(int64_t trial_id, int64_t attempt) {
  const std::chrono::microseconds lease_duration = store_.options().lease_duration;
  return store_.Write([&](Database& db, Timestamp now) -> StatusOr<HeartbeatReply> {
    StatusOr<std::optional<AttemptRecord>> record =
        store_internal::SelectOne<AttemptRecord>(db, "WHERE trial_id = ? AND attempt = ?", trial_id, attempt);
    if (!record.ok()) return record.status();
    if (*record && (*record)->state == TrialState::kCancelled) {
      HeartbeatReply reply;
      reply.lease_expires_at = (*record)->lease_expires_at;
      reply.cancel = true;
      return reply;
    }
    StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, "heartbeat");
    if (!live.ok()) return live.status();
    HeartbeatReply reply;
    reply.lease_expires_at = now + lease_duration;
    StatusOr<Statement> renew =
        db.Prepare("UPDATE attempts SET lease_expires_at = ? WHERE trial_id = ? AND attempt = ?");
    if (!renew.ok()) return renew.status();
    renew->BindAll(ToUnixMicros(reply.lease_expires_at), trial_id, attempt);
    RUNG_RETURN_IF_ERROR(renew->Run());
    RUNG_RETURN_IF_ERROR(TouchWorker(db, live->attempt.worker_id, now));
    return reply;
  });
}

Status TrialLifecycle::Complete(int64_t trial_id, int64_t attempt, const TrialResults& results) {
  const std::string digest = ReportDigest("complete", ResultsJson(results).dump());
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<bool> applied =
        store_internal::IsAppliedReport(db, trial_id, attempt, TrialState::kSucceeded, digest);
    if (!applied.ok()) return applied.status();
    if (*applied) return Status::Ok();
    StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, "completion");
    if (!live.ok()) return live.status();
    const std::string& worker_id = live->attempt.worker_id;
    RUNG_RETURN_IF_ERROR(InsertResults(db, trial_id, attempt, results));
    RUNG_RETURN_IF_ERROR(store_internal::EndAttempt(db, live->trial, TrialState::kSucceeded, "completed", digest, now));
    RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));
    RUNG_RETURN_IF_ERROR(store_internal::MoveTrial(
        db, live->trial, TrialState::kSucceeded, {WorkerActor(worker_id), "completed on worker " + worker_id}, now));
    return store_internal::SettleSweep(db, live->trial.sweep_id, WorkerActor(worker_id), now);
  });
}

StatusOr<TrialState> TrialLifecycle::Fail(int64_t trial_id, int64_t attempt, const std::string& reason) {
  const std::string digest = ReportDigest("fail", reason);
  return store_.Write([&](Database& db, Timestamp now) -> StatusOr<TrialState> {
    StatusOr<bool> applied = store_internal::IsAppliedReport(db, trial_id, attempt, TrialState::kFailed, digest);
    if (!applied.ok()) return applied.status();
    if (*applied) {
      StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, trial_id);
      if (!trial.ok()) return trial.status();
      return trial->state;
    }
    StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, "failure report");
    if (!live.ok()) return live.status();
    TrialRecord& trial = live->trial;
    StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, trial.sweep_id);
    if (!sweep.ok()) return sweep.status();

    StatusOr<Statement> count = db.Prepare("UPDATE trials SET failures = failures + 1 WHERE id = ?");
    if (!count.ok()) return count.status();
    count->Bind(1, trial_id);
    RUNG_RETURN_IF_ERROR(count->Run());
    trial.failures += 1;
    RUNG_RETURN_IF_ERROR(store_internal::EndAttempt(db, trial, TrialState::kFailed, reason, digest, now));
    const std::string& worker_id = live->attempt.worker_id;
    RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));

    const std::string tally = "failure " + std::to_string(trial.failures) + ", policy.max_retries is " +
                              std::to_string(sweep->policy.max_retries);
    if (trial.failures <= sweep->policy.max_retries) {
      RUNG_RETURN_IF_ERROR(store_internal::RequeueThrough(db, trial, TrialState::kFailed,
                                                          {WorkerActor(worker_id), reason + " (" + tally + ")"}, now));
      return TrialState::kPending;
    }
    RUNG_RETURN_IF_ERROR(store_internal::MoveTrial(
        db, trial, TrialState::kFailed, {WorkerActor(worker_id), reason + " (" + tally + ": failed for good)"}, now));
    RUNG_RETURN_IF_ERROR(store_internal::SettleSweep(db, trial.sweep_id, WorkerActor(worker_id), now));
    return TrialState::kFailed;
  });
}

Status TrialLifecycle::Preempted(int64_t trial_id, int64_t attempt, const std::string& reason) {
  const std::string digest = ReportDigest("preempted", reason);
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<bool> applied = store_internal::IsAppliedReport(db, trial_id, attempt, TrialState::kPreempted, digest);
    if (!applied.ok()) return applied.status();
    if (*applied) return Status::Ok();
    StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, "preemption report");
    if (!live.ok()) return live.status();
    const std::string& worker_id = live->attempt.worker_id;
    RUNG_RETURN_IF_ERROR(store_internal::EndAttempt(db, live->trial, TrialState::kPreempted, reason, digest, now));
    RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));
    return store_internal::RequeueThrough(db, live->trial, TrialState::kPreempted, {WorkerActor(worker_id), reason},
                                          now);
  });
}

StatusOr<std::vector<AttemptKey>> TrialLifecycle::ExpireLeases() {
  return store_.Write([&](Database& db, Timestamp now) -> StatusOr<std::vector<AttemptKey>> {
    StatusOr<std::vector<AttemptRecord>> expired = store_internal::Select<AttemptRecord>(
        db, "WHERE state IN ('LEASED', 'RUNNING') AND lease_expires_at <= ? ORDER BY trial_id", ToUnixMicros(now));
    if (!expired.ok()) return expired.status();
    std::vector<AttemptKey> keys;
    for (const AttemptRecord& attempt : *expired) {
      StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, attempt.trial_id);
      if (!trial.ok()) return trial.status();
      const std::string reason = "the lease of worker " + attempt.worker_id + " on attempt " +
                                 std::to_string(attempt.attempt) + " expired without a heartbeat";
      RUNG_RETURN_IF_ERROR(store_internal::EndAttempt(db, *trial, TrialState::kStale, reason, "", now));
      RUNG_RETURN_IF_ERROR(store_internal::RequeueThrough(db, *trial, TrialState::kStale, {kCoordinator, reason}, now));
      keys.push_back({attempt.trial_id, attempt.attempt});
    }
    return keys;
  });
}

StatusOr<int64_t> TrialLifecycle::RestartReconcile() {
  const std::chrono::microseconds lease_duration = store_.options().lease_duration;
  return store_.Write([&](Database& db, Timestamp now) -> StatusOr<int64_t> {
    const Timestamp expires = now + lease_duration;
    StatusOr<Statement> renew =
        db.Prepare("UPDATE attempts SET lease_expires_at = ? WHERE state IN ('LEASED', 'RUNNING')");
    if (!renew.ok()) return renew.status();
    renew->Bind(1, ToUnixMicros(expires));
    RUNG_RETURN_IF_ERROR(renew->Run());
    const int64_t renewed = db.ChangedRows();
    EventRecord event;
    event.at = now;
    event.kind = event_kind::kLeasesReconciled;
    event.actor = kCoordinator;
    event.reason = "coordinator started: " + std::to_string(renewed) + " live leases renewed for a full period";
    RUNG_RETURN_IF_ERROR(store_internal::AppendEvent(db, event));
    return renewed;
  });
}

StatusOr<std::optional<Timestamp>> TrialLifecycle::NextLeaseExpiry() const {
  return store_.Read([&](Database& db) -> StatusOr<std::optional<Timestamp>> {
    StatusOr<Statement> query =
        db.Prepare("SELECT MIN(lease_expires_at) FROM attempts WHERE state IN ('LEASED', 'RUNNING')");
    if (!query.ok()) return query.status();
    StatusOr<bool> row = query->Step();
    if (!row.ok()) return row.status();
    std::optional<int64_t> earliest = query->ColumnOptionalInt64(0);
    if (!earliest) return std::optional<Timestamp>();
    return std::optional<Timestamp>(FromUnixMicros(*earliest));
  });
}

Status TrialLifecycle::Retry(int64_t trial_id, const std::string& actor) {
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, trial_id);
    if (!trial.ok()) return trial.status();
    if (trial->state != TrialState::kFailed) {
      return Status::FailedPrecondition(store_internal::DescribeTrial(db, *trial) + " is " +
                                        TrialStateName(trial->state) + ": only a FAILED trial can be retried");
    }
    StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, trial->sweep_id);
    if (!sweep.ok()) return sweep.status();
    if (sweep->state == SweepState::kCancelled) {
      return Status::FailedPrecondition("sweep " + sweep->name + " was CANCELLED: resubmit its spec to run it again");
    }
    RUNG_RETURN_IF_ERROR(store_internal::RequeueByUser(db, *trial, {actor, "retried"}, now));
    return store_internal::SettleSweep(db, trial->sweep_id, actor, now);
  });
}

StatusOr<TrialRecord> TrialLifecycle::Get(int64_t trial_id) const {
  return store_.Read([&](Database& db) { return store_internal::LoadTrial(db, trial_id); });
}

StatusOr<std::vector<TrialRecord>> TrialLifecycle::List(int64_t sweep_id, std::optional<TrialState> state) const {
  return store_.Read([&](Database& db) {
    return store_internal::Select<TrialRecord>(db, "WHERE sweep_id = ?1 AND (?2 IS NULL OR state = ?2) ORDER BY trial_index",
                                               sweep_id,
                                               state ? std::optional<std::string>(TrialStateName(*state)) : std::nullopt);
  });
}

StatusOr<std::vector<AttemptRecord>> TrialLifecycle::Attempts(int64_t trial_id) const {
  return store_.Read([&](Database& db) {
    return store_internal::Select<AttemptRecord>(db, "WHERE trial_id = ? ORDER BY attempt", trial_id);
  });
}

}  // namespace rung
