#include "coordinator/store/trial_lifecycle.h"

#include <filesystem>

#include "coordinator/store/event_log.h"
#include "coordinator/store/internal/attempt_fence.h"
#include "coordinator/store/internal/attempt_start.h"
#include "coordinator/store/internal/gang_ranks.h"
#include "coordinator/store/internal/records.h"
#include "coordinator/store/internal/results.h"
#include "coordinator/store/internal/transitions.h"
#include "core/common/sha256.h"

namespace rung {
namespace {

using store_internal::Cause;
using store_internal::LiveAttempt;
using store_internal::TouchWorker;

constexpr char kCoordinator[] = "coordinator";

std::string WorkerActor(const std::string& worker_id) { return "worker:" + worker_id; }

// The digest that recognises a repeated report: its kind and its content.
std::string ReportDigest(const std::string& kind, const std::string& content) {
  return Sha256Hex(kind + "\n" + content);
}

// The digest of an attempt's ending: what recognises a repeat of the same report. A success's
// results are in its batches (committed once each, by sequence): its ending is its last batch.
std::string EndingDigest(const AttemptEnding& ending) {
  switch (ending.outcome) {
    case TrialState::kSucceeded: return ReportDigest("complete", std::to_string(ending.last_batch_sequence));
    case TrialState::kFailed: return ReportDigest("fail", ending.reason);
    default: return ReportDigest("preempted", ending.reason);
  }
}

// LEASED -> RUNNING with the trainer's provenance (JSON text, stored as is; "" when not known);
// nothing for a RUNNING attempt. The caller touches the worker (once per transaction is enough).
Status StartRunning(Database& db, LiveAttempt& live, const std::string& provenance_json, Timestamp now) {
  if (live.trial.state == TrialState::kRunning) return Status::Ok();
  StatusOr<Statement> update = db.Prepare(
      "UPDATE attempts SET state = 'RUNNING', started_at = ?, provenance = ? WHERE trial_id = ? AND attempt = ?");
  if (!update.ok()) return update.status();
  update->BindAll(ToUnixMicros(now),
                  provenance_json.empty() ? std::optional<std::string>() : std::optional<std::string>(provenance_json),
                  live.trial.id, live.attempt.attempt);
  RUNG_RETURN_IF_ERROR(update->Run());
  const std::string& worker_id = live.attempt.worker_id;  // the caller touches the worker
  live.attempt.state = TrialState::kRunning;
  return store_internal::MoveTrial(db, live.trial, TrialState::kRunning,
                                   {WorkerActor(worker_id), "the trainer started on worker " + worker_id}, now);
}

// -> SUCCEEDED; the sweep settles. Its results came with its final record, in one of its batches.
Status ApplySuccess(Database& db, LiveAttempt& live, const std::string& digest, Timestamp now) {
  const std::string& worker_id = live.attempt.worker_id;
  StatusOr<int64_t> results = db.QueryInt64(
      "SELECT COUNT(*) FROM (SELECT 1 FROM summaries WHERE trial_id = ? AND attempt = ? LIMIT 1)", live.trial.id,
      live.attempt.attempt);
  if (!results.ok()) return results.status();
  if (*results == 0) {
    return Status::FailedPrecondition(store_internal::DescribeTrial(db, live.trial) + ": the completion of attempt " +
                                      std::to_string(live.attempt.attempt) +
                                      " says SUCCEEDED, but none of its metric batches held the trainer's final "
                                      "record; send it (in the last batch) before completing, or report FAILED");
  }
  RUNG_RETURN_IF_ERROR(store_internal::EndAttempt(db, live.trial, TrialState::kSucceeded, "completed", digest, now));
  RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));
  RUNG_RETURN_IF_ERROR(store_internal::MoveTrial(db, live.trial, TrialState::kSucceeded,
                                                 {WorkerActor(worker_id), "completed on worker " + worker_id}, now));
  return store_internal::SettleSweep(db, live.trial.sweep_id, WorkerActor(worker_id), now);
}

// -> FAILED, then back to PENDING while retries remain; returns the trial's state afterwards.
StatusOr<TrialState> ApplyFailure(Database& db, LiveAttempt& live, const std::string& reason,
                                  const std::string& digest, Timestamp now) {
  TrialRecord& trial = live.trial;
  StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, trial.sweep_id);
  if (!sweep.ok()) return sweep.status();
  StatusOr<Statement> count = db.Prepare("UPDATE trials SET failures = failures + 1 WHERE id = ?");
  if (!count.ok()) return count.status();
  count->Bind(1, trial.id);
  RUNG_RETURN_IF_ERROR(count->Run());
  trial.failures += 1;
  RUNG_RETURN_IF_ERROR(store_internal::EndAttempt(db, trial, TrialState::kFailed, reason, digest, now));
  const std::string& worker_id = live.attempt.worker_id;
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
}

// -> PREEMPTED -> PENDING.
Status ApplyPreemption(Database& db, LiveAttempt& live, const std::string& reason, const std::string& digest,
                       Timestamp now) {
  const std::string& worker_id = live.attempt.worker_id;
  RUNG_RETURN_IF_ERROR(store_internal::EndAttempt(db, live.trial, TrialState::kPreempted, reason, digest, now));
  RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));
  return store_internal::RequeueThrough(db, live.trial, TrialState::kPreempted, {WorkerActor(worker_id), reason}, now);
}

// The report of a gang rank > 0 (gang_ranks.h): SUCCEEDED ends only that rank (rank 0 reports the
// results); FAILED and PREEMPTED end the whole attempt, and the other ranks learn it on their next
// heartbeat (fenced).
StatusOr<EndingAck> EndGangRank(Database& db, const store_internal::GangRankRow& member, const AttemptEnding& ending,
                                const std::string& digest, const char* report, Timestamp now) {
  StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, member.trial_id);
  if (!trial.ok()) return trial.status();
  // A finished rank is acknowledged also when rank 0 completed the trial first.
  const bool trial_done = trial->state == TrialState::kSucceeded && trial->attempt == member.attempt;
  if (ending.outcome == TrialState::kSucceeded && (member.ended || trial_done)) {
    return EndingAck{trial->state, true};
  }
  if (ending.outcome != TrialState::kSucceeded) {
    StatusOr<bool> applied =
        store_internal::IsAppliedReport(db, member.trial_id, member.attempt, ending.outcome, digest);
    if (!applied.ok()) return applied.status();
    if (*applied) return EndingAck{trial->state, true};
  }
  StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, member.trial_id, member.attempt, report);
  if (!live.ok()) return live.status();
  RUNG_RETURN_IF_ERROR(TouchWorker(db, member.worker_id, now));
  if (ending.outcome == TrialState::kSucceeded) {
    RUNG_RETURN_IF_ERROR(store_internal::EndGangRank(db, member.trial_id, member.attempt, member.rank, now));
    return EndingAck{live->trial.state, false};
  }
  // The attempt ends as this rank's worker reported it; the actor is that worker.
  live->attempt.worker_id = member.worker_id;
  const std::string reason = "rank " + std::to_string(member.rank) + " on worker " + member.worker_id + ": " +
                             ending.reason + "; every rank of the gang stops";
  if (ending.outcome == TrialState::kFailed) {
    StatusOr<TrialState> state = ApplyFailure(db, *live, reason, digest, now);
    if (!state.ok()) return state.status();
    return EndingAck{*state, false};
  }
  RUNG_RETURN_IF_ERROR(ApplyPreemption(db, *live, reason, digest, now));
  return EndingAck{TrialState::kPending, false};
}

// A batch's checks that need no database.
Status ValidateBatch(const MetricBatch& batch) {
  if (batch.sequence < 1) {
    return Status::InvalidArgument("metric batch sequence numbers start at 1; got " + std::to_string(batch.sequence));
  }
  for (const MetricPoint& point : batch.points) {
    if (point.name.empty()) return Status::InvalidArgument("a metric point needs a name");
    if (point.step < 0) return Status::InvalidArgument("metric " + point.name + ": step must be >= 0");
  }
  return Status::Ok();
}

// ReportBatch's body (see trial_lifecycle.h), inside the caller's transaction.
StatusOr<BatchAck> ApplyBatch(Database& db, const MetricBatch& batch, Timestamp now) {
  // A batch already committed is acknowledged again, even after its attempt ended: the worker
  // resends until it hears the answer.
  StatusOr<std::optional<AttemptRecord>> stored = store_internal::SelectOne<AttemptRecord>(
      db, "WHERE trial_id = ? AND attempt = ?", batch.trial_id, batch.attempt);
  if (!stored.ok()) return stored.status();
  if (*stored) {
    RUNG_RETURN_IF_ERROR(
        store_internal::CheckAttemptHolder(db, batch.trial_id, **stored, batch.worker_id, "metric batch"));
  }
  if (*stored && batch.sequence <= (*stored)->batches) return BatchAck{(*stored)->batches, true};

  StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, batch.trial_id, batch.attempt, "metric batch",
                                                              *stored ? &**stored : nullptr);
  if (!live.ok()) return live.status();
  const int64_t expected = live->attempt.batches + 1;
  if (batch.sequence != expected) {
    return Status::OutOfRange(store_internal::DescribeTrial(db, live->trial) + ", attempt " +
                              std::to_string(batch.attempt) + ": metric batch " + std::to_string(batch.sequence) +
                              " arrived but batch " + std::to_string(expected) +
                              " is the next one expected; resend from batch " + std::to_string(expected));
  }
  if (!batch.provenance_json.empty()) RUNG_RETURN_IF_ERROR(StartRunning(db, *live, batch.provenance_json, now));
  RUNG_RETURN_IF_ERROR(
      store_internal::InsertMetricPoints(db, batch.trial_id, batch.attempt, batch.points).status());
  RUNG_RETURN_IF_ERROR(store_internal::InsertResults(db, batch.trial_id, batch.attempt, batch.results));
  RUNG_RETURN_IF_ERROR(
      store_internal::InsertLogLines(db, batch.trial_id, batch.attempt, batch.sequence, batch.lines, now));
  StatusOr<Statement> count = db.Prepare("UPDATE attempts SET batches = ? WHERE trial_id = ? AND attempt = ?");
  if (!count.ok()) return count.status();
  count->BindAll(batch.sequence, batch.trial_id, batch.attempt);
  RUNG_RETURN_IF_ERROR(count->Run());
  RUNG_RETURN_IF_ERROR(TouchWorker(db, live->attempt.worker_id, now));
  return BatchAck{batch.sequence, false};
}

// EndAttempt's checks that need no database.
Status ValidateEnding(int64_t trial_id, int64_t attempt, const AttemptEnding& ending, const MetricBatch* final_batch) {
  if (ending.outcome != TrialState::kSucceeded && ending.outcome != TrialState::kFailed &&
      ending.outcome != TrialState::kPreempted) {
    return Status::InvalidArgument(std::string("an attempt ends SUCCEEDED, FAILED or PREEMPTED, not ") +
                                   TrialStateName(ending.outcome));
  }
  if (final_batch != nullptr) {
    RUNG_RETURN_IF_ERROR(ValidateBatch(*final_batch));
    if (final_batch->trial_id != trial_id || final_batch->attempt != attempt ||
        final_batch->sequence != ending.last_batch_sequence) {
      return Status::InvalidArgument("the final batch (trial " + std::to_string(final_batch->trial_id) + " attempt " +
                                     std::to_string(final_batch->attempt) + " batch " +
                                     std::to_string(final_batch->sequence) + ") must belong to trial " +
                                     std::to_string(trial_id) + " attempt " + std::to_string(attempt) +
                                     " and be its last batch " + std::to_string(ending.last_batch_sequence));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::optional<Lease>> TrialLifecycle::LeaseNextTrial(const std::string& worker_id, int64_t free_cpus,
                                                              int64_t free_gpus) {
  return store_.Write(
      [&](Database& db, Timestamp now) { return LeaseNextTrialIn(db, worker_id, free_cpus, free_gpus, now); });
}

StatusOr<std::optional<Lease>> TrialLifecycle::LeaseNextTrialIn(Database& db, const std::string& worker_id,
                                                                int64_t free_cpus, int64_t free_gpus,
                                                                Timestamp now) const {
  const StoreOptions& options = store_.options();
  RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));
  if (db.ChangedRows() == 0) {  // no such row: the touch doubles as the existence check
    return Status::NotFound("worker " + worker_id + " is not registered: register it before leasing");
  }

  StatusOr<std::optional<store_internal::TrialHeader>> next = store_internal::SelectOne<store_internal::TrialHeader>(
      db,
      "JOIN sweeps ON sweeps.id = trials.sweep_id "
      "WHERE trials.state = 'PENDING' AND sweeps.state = 'ACTIVE' AND trials.cpus <= ? AND trials.gpus <= ? "
      "ORDER BY trials.priority DESC, trials.id LIMIT 1",
      free_cpus, free_gpus);
  if (!next.ok()) return next.status();
  if (!*next) return std::optional<Lease>();
  TrialRecord& trial = **next;
  StatusOr<Lease> lease = store_internal::StartAttempt(db, trial, worker_id, options, now);
  if (!lease.ok()) return lease.status();
  RUNG_RETURN_IF_ERROR(store_internal::MoveTrial(
      db, trial, TrialState::kLeased,
      {WorkerActor(worker_id), "leased by worker " + worker_id + " as attempt " + std::to_string(lease->attempt)},
      now));
  return std::optional<Lease>(std::move(lease).value());
}

Status TrialLifecycle::MarkRunning(int64_t trial_id, int64_t attempt, const nlohmann::json& provenance) {
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, "running report");
    if (!live.ok()) return live.status();
    RUNG_RETURN_IF_ERROR(TouchWorker(db, live->attempt.worker_id, now));
    return StartRunning(db, *live, provenance.is_null() ? std::string() : provenance.dump(), now);
  });
}

StatusOr<BatchAck> TrialLifecycle::ReportBatch(const MetricBatch& batch) {
  RUNG_RETURN_IF_ERROR(ValidateBatch(batch));
  return store_.Write([&](Database& db, Timestamp now) { return ApplyBatch(db, batch, now); });
}

StatusOr<HeartbeatReply> TrialLifecycle::Heartbeat(int64_t trial_id, int64_t attempt, const std::string& worker_id) {
  const std::chrono::microseconds lease_duration = store_.options().lease_duration;
  return store_.Write([&](Database& db, Timestamp now) -> StatusOr<HeartbeatReply> {
    StatusOr<std::optional<AttemptRecord>> record =
        store_internal::SelectOne<AttemptRecord>(db, "WHERE trial_id = ? AND attempt = ?", trial_id, attempt);
    if (!record.ok()) return record.status();
    // A gang member other than rank 0 renews its own rank's lease (gang_ranks.h).
    std::optional<store_internal::GangRankRow> member;
    if (*record && !worker_id.empty() && worker_id != (*record)->worker_id) {
      StatusOr<std::optional<store_internal::GangRankRow>> rank =
          store_internal::GangRankOf(db, trial_id, attempt, worker_id);
      if (!rank.ok()) return rank.status();
      member = *rank;
    }
    if (*record && !member) {
      RUNG_RETURN_IF_ERROR(store_internal::CheckAttemptHolder(db, trial_id, **record, worker_id, "heartbeat"));
    }
    if (*record && (*record)->state == TrialState::kCancelled) {
      HeartbeatReply reply;
      reply.lease_expires_at = (*record)->lease_expires_at;
      reply.cancel = true;
      reply.reason = (*record)->exit_reason;
      return reply;
    }
    StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, "heartbeat");
    if (!live.ok()) return live.status();
    HeartbeatReply reply;
    reply.lease_expires_at = now + lease_duration;
    if (member) {
      RUNG_RETURN_IF_ERROR(store_internal::RenewGangRank(db, trial_id, attempt, member->rank, reply.lease_expires_at));
      RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));
      return reply;
    }
    StatusOr<Statement> renew =
        db.Prepare("UPDATE attempts SET lease_expires_at = ? WHERE trial_id = ? AND attempt = ?");
    if (!renew.ok()) return renew.status();
    renew->BindAll(ToUnixMicros(reply.lease_expires_at), trial_id, attempt);
    RUNG_RETURN_IF_ERROR(renew->Run());
    RUNG_RETURN_IF_ERROR(TouchWorker(db, live->attempt.worker_id, now));
    return reply;
  });
}

StatusOr<EndingAck> TrialLifecycle::EndAttempt(int64_t trial_id, int64_t attempt, const AttemptEnding& ending,
                                               const MetricBatch* final_batch) {
  return store_.Write(
      [&](Database& db, Timestamp now) { return EndAttemptIn(db, trial_id, attempt, ending, final_batch, now); });
}

StatusOr<EndingAck> TrialLifecycle::EndAttemptIn(Database& db, int64_t trial_id, int64_t attempt,
                                                 const AttemptEnding& ending, const MetricBatch* final_batch,
                                                 Timestamp now) const {
  RUNG_RETURN_IF_ERROR(ValidateEnding(trial_id, attempt, ending, final_batch));
  const std::string digest = EndingDigest(ending);
  const char* report = ending.outcome == TrialState::kSucceeded ? "completion"
                       : ending.outcome == TrialState::kFailed  ? "failure report"
                                                                : "preemption report";
  StatusOr<std::optional<store_internal::GangRankRow>> member =
      ending.worker_id.empty() ? std::optional<store_internal::GangRankRow>()
                               : store_internal::GangRankOf(db, trial_id, attempt, ending.worker_id);
  if (!member.ok()) return member.status();
  if (final_batch != nullptr) RUNG_RETURN_IF_ERROR(ApplyBatch(db, *final_batch, now).status());
  if (*member && (*member)->rank > 0) return EndGangRank(db, **member, ending, digest, report, now);
  RUNG_RETURN_IF_ERROR(store_internal::CheckAttemptHolder(db, trial_id, attempt, ending.worker_id, report));
  StatusOr<bool> applied = store_internal::IsAppliedReport(db, trial_id, attempt, ending.outcome, digest);
  if (!applied.ok()) return applied.status();
  if (*applied) {
    StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, trial_id);
    if (!trial.ok()) return trial.status();
    return EndingAck{trial->state, true};
  }
  StatusOr<LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, report);
  if (!live.ok()) return live.status();
  if (ending.last_batch_sequence > live->attempt.batches) {
    return Status::FailedPrecondition(
        store_internal::DescribeTrial(db, live->trial) + ": the " + report + " of attempt " +
        std::to_string(attempt) + " names metric batch " + std::to_string(ending.last_batch_sequence) +
        " as its last, but only batches 1.." + std::to_string(live->attempt.batches) +
        " were received; send the missing batches first");
  }
  switch (ending.outcome) {
    case TrialState::kSucceeded:
      RUNG_RETURN_IF_ERROR(ApplySuccess(db, *live, digest, now));
      return EndingAck{TrialState::kSucceeded, false};
    case TrialState::kFailed: {
      StatusOr<TrialState> state = ApplyFailure(db, *live, ending.reason, digest, now);
      if (!state.ok()) return state.status();
      return EndingAck{*state, false};
    }
    default:
      RUNG_RETURN_IF_ERROR(ApplyPreemption(db, *live, ending.reason, digest, now));
      return EndingAck{TrialState::kPending, false};
  }
}

Status TrialLifecycle::Complete(int64_t trial_id, int64_t attempt, const TrialResults& results) {
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<std::optional<AttemptRecord>> stored =
        store_internal::SelectOne<AttemptRecord>(db, "WHERE trial_id = ? AND attempt = ?", trial_id, attempt);
    if (!stored.ok()) return stored.status();
    MetricBatch last;
    last.trial_id = trial_id;
    last.attempt = attempt;
    // A live attempt's next batch; an ended one's last (this is then a repeat, acknowledged again).
    const bool live = *stored && IsLive((*stored)->state);
    last.sequence = live || !*stored ? (*stored ? (*stored)->batches : 0) + 1 : std::max<int64_t>(1, (*stored)->batches);
    last.results = results;
    AttemptEnding ending;
    ending.outcome = TrialState::kSucceeded;
    ending.last_batch_sequence = last.sequence;
    return EndAttemptIn(db, trial_id, attempt, ending, &last, now).status();
  });
}

StatusOr<TrialState> TrialLifecycle::Fail(int64_t trial_id, int64_t attempt, const std::string& reason) {
  AttemptEnding ending;
  ending.outcome = TrialState::kFailed;
  ending.reason = reason;
  StatusOr<EndingAck> ack = EndAttempt(trial_id, attempt, ending);
  if (!ack.ok()) return ack.status();
  return ack->trial_state;
}

Status TrialLifecycle::Preempted(int64_t trial_id, int64_t attempt, const std::string& reason) {
  AttemptEnding ending;
  ending.outcome = TrialState::kPreempted;
  ending.reason = reason;
  return EndAttempt(trial_id, attempt, ending).status();
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
    // A gang rank whose worker stopped heartbeating ends the whole attempt.
    StatusOr<std::vector<store_internal::GangRankRow>> ranks = store_internal::ExpiredGangRanks(db, now);
    if (!ranks.ok()) return ranks.status();
    for (const store_internal::GangRankRow& rank : *ranks) {
      StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, rank.trial_id);
      if (!trial.ok()) return trial.status();
      if (trial->attempt != rank.attempt || !IsLive(trial->state)) continue;  // ended by an earlier rank
      const std::string reason = "the lease of worker " + rank.worker_id + " on rank " + std::to_string(rank.rank) +
                                 " of attempt " + std::to_string(rank.attempt) +
                                 " expired without a heartbeat; every rank of the gang stops";
      RUNG_RETURN_IF_ERROR(store_internal::EndAttempt(db, *trial, TrialState::kStale, reason, "", now));
      RUNG_RETURN_IF_ERROR(store_internal::RequeueThrough(db, *trial, TrialState::kStale, {kCoordinator, reason}, now));
      keys.push_back({rank.trial_id, rank.attempt});
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
    StatusOr<Statement> renew_ranks = db.Prepare(
        "UPDATE attempt_ranks SET lease_expires_at = ? WHERE ended_at IS NULL AND EXISTS (SELECT 1 FROM attempts a "
        "WHERE a.trial_id = attempt_ranks.trial_id AND a.attempt = attempt_ranks.attempt AND "
        "a.state IN ('LEASED', 'RUNNING'))");
    if (!renew_ranks.ok()) return renew_ranks.status();
    renew_ranks->Bind(1, ToUnixMicros(expires));
    RUNG_RETURN_IF_ERROR(renew_ranks->Run());
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
        db.Prepare("SELECT MIN(t) FROM (SELECT MIN(lease_expires_at) AS t FROM attempts WHERE state IN ('LEASED', "
                   "'RUNNING') UNION ALL SELECT MIN(r.lease_expires_at) FROM attempt_ranks r JOIN attempts a ON "
                   "a.trial_id = r.trial_id AND a.attempt = r.attempt WHERE a.state IN ('LEASED', 'RUNNING') AND "
                   "r.rank > 0 AND r.ended_at IS NULL)");
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
