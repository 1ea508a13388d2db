// coordinator/domain/trial_lifecycle.cc
#include "coordinator/domain/trial_lifecycle.h"

#include <algorithm>

#include "coordinator/domain/allocation_fit.h"
#include "coordinator/domain/attempt_fence.h"
#include "coordinator/domain/attempt_start.h"
#include "coordinator/domain/transitions.h"
#include "coordinator/domain/worker_quarantine.h"
#include "coordinator/store/event_log.h"
#include "core/common/sha256.h"

namespace rung {
namespace {

// rung-train's exit code for a run whose loss went non-finite (docs/cli.md, "Exit codes").
constexpr int kTrainerExitNonFinite = 3;

using domain::Cause;
using domain::LiveAttempt;
using domain::WorkerActor;

// The worker was seen now (the caller knows it is registered).
Status TouchWorker(Tables& tables, const std::string& worker_id) {
  return tables.workers().Touch(worker_id, tables.now()).status();
}

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
Status StartRunning(Tables& tables, LiveAttempt& live, const std::string& provenance_json) {
  if (live.trial.state == TrialState::kRunning) return Status::Ok();
  RUNG_RETURN_IF_ERROR(
      tables.attempts().SetRunning(live.trial.id, live.attempt.attempt, tables.now(), provenance_json));
  const std::string& worker_id = live.attempt.worker_id;
  live.attempt.state = TrialState::kRunning;
  return domain::MoveTrial(tables, live.trial, TrialState::kRunning,
                           {WorkerActor(worker_id), "the trainer started on worker " + worker_id});
}

// The ending as its worker's (worker_quarantine.h).
StatusOr<domain::EndingVerdict> RecordWorkerEnding(Tables& tables, const LiveAttempt& live, TrialState outcome,
                                                   int exit_code) {
  return domain::RecordEnding(tables, live.attempt.worker_id, live.trial.id, live.attempt.attempt, outcome, exit_code);
}

// -> SUCCEEDED; the sweep settles. Its results came with its final record, in one of its batches.
Status ApplySuccess(Tables& tables, LiveAttempt& live, const std::string& digest) {
  const std::string& worker_id = live.attempt.worker_id;
  RUNG_ASSIGN_OR_RETURN(bool has_results, tables.outputs().HasSummaries(live.trial.id, live.attempt.attempt));
  if (!has_results) {
    return Status::FailedPrecondition(tables.trials().Describe(live.trial) + ": the completion of attempt " +
                                      std::to_string(live.attempt.attempt) +
                                      " says SUCCEEDED, but none of its metric batches held the trainer's final "
                                      "record; send it (in the last batch) before completing, or report FAILED");
  }
  RUNG_RETURN_IF_ERROR(domain::EndAttempt(tables, live.trial, TrialState::kSucceeded, "completed", digest));
  RUNG_RETURN_IF_ERROR(RecordWorkerEnding(tables, live, TrialState::kSucceeded, 0).status());
  RUNG_RETURN_IF_ERROR(TouchWorker(tables, worker_id));
  RUNG_RETURN_IF_ERROR(domain::MoveTrial(tables, live.trial, TrialState::kSucceeded,
                                         {WorkerActor(worker_id), "completed on worker " + worker_id}));
  return domain::SettleSweep(tables, live.trial.sweep_id, WorkerActor(worker_id));
}

// -> FAILED, then back to PENDING while retries remain (a failure the worker's quarantine takes
// off does not count); returns the trial's state afterwards.
StatusOr<TrialState> ApplyFailure(Tables& tables, LiveAttempt& live, const std::string& reason, int exit_code,
                                  const std::string& digest) {
  TrialRecord& trial = live.trial;
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(trial.sweep_id));
  const std::string& worker_id = live.attempt.worker_id;
  if (!sweep.tuning.empty() && exit_code == kTrainerExitNonFinite) {
    // In a tuned sweep a non-finite loss is a result about the value tried, not a failure: the
    // trial stops for good and ranks after every finite value (sweep_tuner.h).
    RUNG_RETURN_IF_ERROR(domain::EndAttempt(tables, trial, TrialState::kEarlyStopped, reason, digest));
    RUNG_RETURN_IF_ERROR(RecordWorkerEnding(tables, live, TrialState::kFailed, exit_code).status());
    RUNG_RETURN_IF_ERROR(TouchWorker(tables, worker_id));
    RUNG_RETURN_IF_ERROR(domain::MoveTrial(tables, trial, TrialState::kEarlyStopped,
                                           {WorkerActor(worker_id), "non_finite: " + reason + " (not retried)"},
                                           EarlyStop::kNonFinite));
    RUNG_RETURN_IF_ERROR(domain::SettleSweep(tables, trial.sweep_id, WorkerActor(worker_id)));
    return TrialState::kEarlyStopped;
  }
  RUNG_RETURN_IF_ERROR(tables.trials().AddFailure(trial.id));
  trial.failures += 1;
  RUNG_RETURN_IF_ERROR(domain::EndAttempt(tables, trial, TrialState::kFailed, reason, digest));
  RUNG_ASSIGN_OR_RETURN(domain::EndingVerdict verdict,
                        RecordWorkerEnding(tables, live, TrialState::kFailed, exit_code));
  trial.failures -= verdict.refunded_of_trial;
  RUNG_RETURN_IF_ERROR(TouchWorker(tables, worker_id));

  const std::string counted = verdict.refunded_of_trial > 0 ? "not counted: worker " + worker_id + " is quarantined, " +
                                                                  std::to_string(trial.failures) + " failures count"
                                                            : "failure " + std::to_string(trial.failures);
  const std::string tally = counted + ", policy.max_retries is " + std::to_string(sweep.policy.max_retries);
  if (trial.failures <= sweep.policy.max_retries) {
    RUNG_RETURN_IF_ERROR(domain::RequeueThrough(tables, trial, TrialState::kFailed,
                                                {WorkerActor(worker_id), reason + " (" + tally + ")"}));
    return TrialState::kPending;
  }
  RUNG_RETURN_IF_ERROR(domain::MoveTrial(tables, trial, TrialState::kFailed,
                                         {WorkerActor(worker_id), reason + " (" + tally + ": failed for good)"}));
  RUNG_RETURN_IF_ERROR(domain::SettleSweep(tables, trial.sweep_id, WorkerActor(worker_id)));
  return TrialState::kFailed;
}

// -> PREEMPTED -> PENDING.
Status ApplyPreemption(Tables& tables, LiveAttempt& live, const std::string& reason, const std::string& digest) {
  const std::string& worker_id = live.attempt.worker_id;
  RUNG_RETURN_IF_ERROR(domain::EndAttempt(tables, live.trial, TrialState::kPreempted, reason, digest));
  RUNG_RETURN_IF_ERROR(RecordWorkerEnding(tables, live, TrialState::kPreempted, 0).status());
  RUNG_RETURN_IF_ERROR(TouchWorker(tables, worker_id));
  return domain::RequeueThrough(tables, live.trial, TrialState::kPreempted, {WorkerActor(worker_id), reason});
}

// The ending of a live attempt as reported (SUCCEEDED, FAILED or PREEMPTED; `reason` replaces
// the ending's own).
StatusOr<EndingAck> ApplyEnding(Tables& tables, LiveAttempt& live, const AttemptEnding& ending,
                                const std::string& reason, const std::string& digest) {
  switch (ending.outcome) {
    case TrialState::kSucceeded:
      RUNG_RETURN_IF_ERROR(ApplySuccess(tables, live, digest));
      return EndingAck{TrialState::kSucceeded, false};
    case TrialState::kFailed: {
      RUNG_ASSIGN_OR_RETURN(TrialState state, ApplyFailure(tables, live, reason, ending.exit_code, digest));
      return EndingAck{state, false};
    }
    default:
      RUNG_RETURN_IF_ERROR(ApplyPreemption(tables, live, reason, digest));
      return EndingAck{TrialState::kPending, false};
  }
}

// The report of a gang rank > 0 (gang_table.h): SUCCEEDED ends only that rank (rank 0 reports the
// results); FAILED and PREEMPTED end the whole attempt, and the other ranks learn it on their next
// heartbeat (fenced).
StatusOr<EndingAck> EndGangRank(Tables& tables, const GangRankRow& member, const AttemptEnding& ending,
                                const std::string& digest, const char* report) {
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(member.trial_id));
  // A finished rank is acknowledged also when rank 0 completed the trial first.
  const bool trial_done = trial.state == TrialState::kSucceeded && trial.attempt == member.attempt;
  if (ending.outcome == TrialState::kSucceeded && (member.ended || trial_done)) return EndingAck{trial.state, true};
  if (ending.outcome != TrialState::kSucceeded) {
    RUNG_ASSIGN_OR_RETURN(bool applied, domain::IsAppliedReport(tables, member.trial_id, member.attempt,
                                                                ending.outcome, digest));
    if (applied) return EndingAck{trial.state, true};
  }
  RUNG_ASSIGN_OR_RETURN(LiveAttempt live, domain::LoadLiveAttempt(tables, member.trial_id, member.attempt, report));
  RUNG_RETURN_IF_ERROR(TouchWorker(tables, member.worker_id));
  if (ending.outcome == TrialState::kSucceeded) {
    RUNG_RETURN_IF_ERROR(tables.gangs().EndRank(member.trial_id, member.attempt, member.rank, tables.now()));
    RUNG_RETURN_IF_ERROR(
        domain::RecordEnding(tables, member.worker_id, member.trial_id, member.attempt, TrialState::kSucceeded, 0)
            .status());
    return EndingAck{live.trial.state, false};
  }
  // The attempt ends as this rank's worker reported it; the actor is that worker.
  live.attempt.worker_id = member.worker_id;
  const std::string reason = "rank " + std::to_string(member.rank) + " on worker " + member.worker_id + ": " +
                             ending.reason + "; every rank of the gang stops";
  return ApplyEnding(tables, live, ending, reason, digest);
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
StatusOr<BatchAck> ApplyBatch(Tables& tables, const MetricBatch& batch) {
  // A batch already committed is acknowledged again, even after its attempt ended: the worker
  // resends until it hears the answer.
  RUNG_ASSIGN_OR_RETURN(std::optional<AttemptRecord> stored, tables.attempts().Find(batch.trial_id, batch.attempt));
  if (stored) {
    RUNG_RETURN_IF_ERROR(
        domain::CheckAttemptHolder(tables, batch.trial_id, *stored, batch.worker_id, "metric batch"));
    if (batch.sequence <= stored->batches) return BatchAck{stored->batches, true};
  }
  RUNG_ASSIGN_OR_RETURN(LiveAttempt live, domain::LoadLiveAttempt(tables, batch.trial_id, batch.attempt,
                                                                  "metric batch", stored ? &*stored : nullptr));
  const int64_t expected = live.attempt.batches + 1;
  if (batch.sequence != expected) {
    return Status::OutOfRange(tables.trials().Describe(live.trial) + ", attempt " + std::to_string(batch.attempt) +
                              ": metric batch " + std::to_string(batch.sequence) + " arrived but batch " +
                              std::to_string(expected) + " is the next one expected; resend from batch " +
                              std::to_string(expected));
  }
  if (!batch.provenance_json.empty()) RUNG_RETURN_IF_ERROR(StartRunning(tables, live, batch.provenance_json));
  OutputTable outputs = tables.outputs();
  RUNG_RETURN_IF_ERROR(outputs.InsertMetricPoints(batch.trial_id, batch.attempt, batch.points));
  RUNG_RETURN_IF_ERROR(outputs.InsertResults(batch.trial_id, batch.attempt, batch.results));
  RUNG_RETURN_IF_ERROR(outputs.InsertLogLines(batch.trial_id, batch.attempt, batch.sequence, batch.lines, tables.now()));
  RUNG_RETURN_IF_ERROR(tables.attempts().SetBatches(batch.trial_id, batch.attempt, batch.sequence));
  RUNG_RETURN_IF_ERROR(TouchWorker(tables, live.attempt.worker_id));
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

// Ends `trial` STALE (its lease, or a rank's, ran out) and requeues it.
Status ExpireAttempt(Tables& tables, TrialRecord& trial, const std::string& reason) {
  RUNG_RETURN_IF_ERROR(domain::EndAttempt(tables, trial, TrialState::kStale, reason, ""));
  return domain::RequeueThrough(tables, trial, TrialState::kStale, {domain::kCoordinatorActor, reason});
}

}  // namespace

StatusOr<std::optional<Lease>> TrialLifecycle::LeaseNextTrial(const std::string& worker_id, int64_t free_cpus,
                                                              int64_t free_gpus) {
  RUNG_ASSIGN_OR_RETURN(std::optional<Lease> lease, store_.Write([&](Tables& tables) {
    return LeaseNextTrialIn(tables, worker_id, free_cpus, free_gpus);
  }));
  if (lease) ChangeSignals::Announce(signals_, false);
  return lease;
}

StatusOr<std::optional<Lease>> TrialLifecycle::LeaseNextTrialIn(Tables& tables, const std::string& worker_id,
                                                                int64_t free_cpus, int64_t free_gpus) const {
  RUNG_ASSIGN_OR_RETURN(std::optional<WorkerRecord> worker, tables.workers().Find(worker_id));
  if (!worker) return Status::NotFound("worker " + worker_id + " is not registered: register it before leasing");
  RUNG_RETURN_IF_ERROR(TouchWorker(tables, worker_id));
  std::optional<TrialRecord> next;
  if (worker->info.stops_at) {  // allocation_fit.h: only what reaches its next checkpoint in time
    RUNG_ASSIGN_OR_RETURN(next, domain::NextLeasableBefore(tables, free_cpus, free_gpus, worker_id,
                                                           *worker->info.stops_at));
  } else {
    RUNG_ASSIGN_OR_RETURN(next, tables.trials().NextLeasable(free_cpus, free_gpus, worker_id));
  }
  if (!next) return std::optional<Lease>();
  TrialRecord& trial = *next;
  RUNG_ASSIGN_OR_RETURN(Lease lease, domain::StartAttempt(tables, trial, worker_id));
  RUNG_RETURN_IF_ERROR(domain::MoveTrial(
      tables, trial, TrialState::kLeased,
      {WorkerActor(worker_id), "leased by worker " + worker_id + " as attempt " + std::to_string(lease.attempt)}));
  return std::optional<Lease>(std::move(lease));
}

Status TrialLifecycle::MarkRunning(int64_t trial_id, int64_t attempt, const nlohmann::json& provenance) {
  RUNG_RETURN_IF_ERROR(store_.Write([&](Tables& tables) -> Status {
    RUNG_ASSIGN_OR_RETURN(LiveAttempt live, domain::LoadLiveAttempt(tables, trial_id, attempt, "running report"));
    RUNG_RETURN_IF_ERROR(TouchWorker(tables, live.attempt.worker_id));
    return StartRunning(tables, live, provenance.is_null() ? std::string() : provenance.dump());
  }));
  ChangeSignals::Announce(signals_, false);
  return Status::Ok();
}

StatusOr<BatchAck> TrialLifecycle::ReportBatch(const MetricBatch& batch) {
  RUNG_RETURN_IF_ERROR(ValidateBatch(batch));
  RUNG_ASSIGN_OR_RETURN(BatchAck ack, store_.Write([&](Tables& tables) { return ApplyBatch(tables, batch); }));
  if (!ack.duplicate) ChangeSignals::Announce(signals_, false);
  return ack;
}

StatusOr<HeartbeatReply> TrialLifecycle::Heartbeat(int64_t trial_id, int64_t attempt, const std::string& worker_id) {
  return store_.Write([&](Tables& tables) -> StatusOr<HeartbeatReply> {
    RUNG_ASSIGN_OR_RETURN(std::optional<AttemptRecord> record, tables.attempts().Find(trial_id, attempt));
    // A gang member other than rank 0 renews its own rank's lease (gang_table.h).
    std::optional<GangRankRow> member;
    if (record && !worker_id.empty() && worker_id != record->worker_id) {
      RUNG_ASSIGN_OR_RETURN(member, tables.gangs().RankOf(trial_id, attempt, worker_id));
    }
    if (record && !member) {
      RUNG_RETURN_IF_ERROR(domain::CheckAttemptHolder(tables, trial_id, *record, worker_id, "heartbeat"));
    }
    if (record && (record->state == TrialState::kCancelled || record->state == TrialState::kEarlyStopped)) {
      HeartbeatReply reply;
      reply.lease_expires_at = record->lease_expires_at;
      reply.cancel = true;
      reply.reason = record->exit_reason;
      return reply;
    }
    RUNG_ASSIGN_OR_RETURN(LiveAttempt live, domain::LoadLiveAttempt(tables, trial_id, attempt, "heartbeat"));
    HeartbeatReply reply;
    reply.lease_expires_at = tables.now() + tables.options().lease_duration;
    if (member) {
      RUNG_RETURN_IF_ERROR(tables.gangs().RenewRank(trial_id, attempt, member->rank, reply.lease_expires_at));
      RUNG_RETURN_IF_ERROR(TouchWorker(tables, worker_id));
      return reply;
    }
    RUNG_RETURN_IF_ERROR(tables.attempts().RenewLease(trial_id, attempt, reply.lease_expires_at));
    RUNG_RETURN_IF_ERROR(TouchWorker(tables, live.attempt.worker_id));
    return reply;
  });
}

StatusOr<EndingAck> TrialLifecycle::EndAttempt(int64_t trial_id, int64_t attempt, const AttemptEnding& ending,
                                               const MetricBatch* final_batch) {
  RUNG_ASSIGN_OR_RETURN(EndingAck ack, store_.Write([&](Tables& tables) {
    return EndAttemptIn(tables, trial_id, attempt, ending, final_batch);
  }));
  Ended(ack);
  return ack;
}

void TrialLifecycle::Ended(const EndingAck& ack) const {
  if (!ack.duplicate) ChangeSignals::Announce(signals_, ack.trial_state == TrialState::kPending);
}

StatusOr<EndingAck> TrialLifecycle::EndAttemptIn(Tables& tables, int64_t trial_id, int64_t attempt,
                                                 const AttemptEnding& ending, const MetricBatch* final_batch) const {
  RUNG_RETURN_IF_ERROR(ValidateEnding(trial_id, attempt, ending, final_batch));
  const std::string digest = EndingDigest(ending);
  const char* report = ending.outcome == TrialState::kSucceeded ? "completion"
                       : ending.outcome == TrialState::kFailed  ? "failure report"
                                                                : "preemption report";
  std::optional<GangRankRow> member;
  if (!ending.worker_id.empty()) {
    RUNG_ASSIGN_OR_RETURN(member, tables.gangs().RankOf(trial_id, attempt, ending.worker_id));
  }
  if (final_batch != nullptr) RUNG_RETURN_IF_ERROR(ApplyBatch(tables, *final_batch));
  if (member && member->rank > 0) return EndGangRank(tables, *member, ending, digest, report);
  RUNG_RETURN_IF_ERROR(domain::CheckAttemptHolder(tables, trial_id, attempt, ending.worker_id, report));
  RUNG_ASSIGN_OR_RETURN(bool applied, domain::IsAppliedReport(tables, trial_id, attempt, ending.outcome, digest));
  if (applied) {
    RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(trial_id));
    return EndingAck{trial.state, true};
  }
  RUNG_ASSIGN_OR_RETURN(LiveAttempt live, domain::LoadLiveAttempt(tables, trial_id, attempt, report));
  if (ending.last_batch_sequence > live.attempt.batches) {
    return Status::FailedPrecondition(
        tables.trials().Describe(live.trial) + ": the " + report + " of attempt " + std::to_string(attempt) +
        " names metric batch " + std::to_string(ending.last_batch_sequence) + " as its last, but only batches 1.." +
        std::to_string(live.attempt.batches) + " were received; send the missing batches first");
  }
  return ApplyEnding(tables, live, ending, ending.reason, digest);
}

Status TrialLifecycle::Complete(int64_t trial_id, int64_t attempt, const TrialResults& results) {
  RUNG_ASSIGN_OR_RETURN(EndingAck ack, store_.Write([&](Tables& tables) -> StatusOr<EndingAck> {
    RUNG_ASSIGN_OR_RETURN(std::optional<AttemptRecord> stored, tables.attempts().Find(trial_id, attempt));
    MetricBatch last;
    last.trial_id = trial_id;
    last.attempt = attempt;
    // A live attempt's next batch; an ended one's last (this is then a repeat, acknowledged again).
    const bool live = stored && IsLive(stored->state);
    last.sequence = live || !stored ? (stored ? stored->batches : 0) + 1 : std::max<int64_t>(1, stored->batches);
    last.results = results;
    AttemptEnding ending;
    ending.outcome = TrialState::kSucceeded;
    ending.last_batch_sequence = last.sequence;
    return EndAttemptIn(tables, trial_id, attempt, ending, &last);
  }));
  Ended(ack);
  return Status::Ok();
}

StatusOr<TrialState> TrialLifecycle::Fail(int64_t trial_id, int64_t attempt, const std::string& reason) {
  AttemptEnding ending;
  ending.outcome = TrialState::kFailed;
  ending.reason = reason;
  RUNG_ASSIGN_OR_RETURN(EndingAck ack, EndAttempt(trial_id, attempt, ending));
  return ack.trial_state;
}

Status TrialLifecycle::Preempted(int64_t trial_id, int64_t attempt, const std::string& reason) {
  AttemptEnding ending;
  ending.outcome = TrialState::kPreempted;
  ending.reason = reason;
  return EndAttempt(trial_id, attempt, ending).status();
}

StatusOr<std::vector<AttemptKey>> TrialLifecycle::ExpireLeases() {
  RUNG_ASSIGN_OR_RETURN(std::vector<AttemptKey> keys, store_.Write([&](Tables& tables) -> StatusOr<std::vector<AttemptKey>> {
    RUNG_ASSIGN_OR_RETURN(std::vector<AttemptRecord> expired, tables.attempts().ExpiredLive(tables.now()));
    std::vector<AttemptKey> expired_keys;
    for (const AttemptRecord& attempt : expired) {
      RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(attempt.trial_id));
      RUNG_RETURN_IF_ERROR(ExpireAttempt(tables, trial,
                                         "the lease of worker " + attempt.worker_id + " on attempt " +
                                             std::to_string(attempt.attempt) + " expired without a heartbeat"));
      expired_keys.push_back({attempt.trial_id, attempt.attempt});
    }
    // A gang rank whose worker stopped heartbeating ends the whole attempt.
    RUNG_ASSIGN_OR_RETURN(std::vector<GangRankRow> ranks, tables.gangs().ExpiredRanks(tables.now()));
    for (const GangRankRow& rank : ranks) {
      RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(rank.trial_id));
      if (trial.attempt != rank.attempt || !IsLive(trial.state)) continue;  // ended by an earlier rank
      RUNG_RETURN_IF_ERROR(ExpireAttempt(tables, trial,
                                         "the lease of worker " + rank.worker_id + " on rank " +
                                             std::to_string(rank.rank) + " of attempt " + std::to_string(rank.attempt) +
                                             " expired without a heartbeat; every rank of the gang stops"));
      expired_keys.push_back({rank.trial_id, rank.attempt});
    }
    return expired_keys;
  }));
  if (!keys.empty()) ChangeSignals::Announce(signals_, true);
  return keys;
}

StatusOr<int64_t> TrialLifecycle::RestartReconcile() {
  return store_.Write([&](Tables& tables) -> StatusOr<int64_t> {
    RUNG_ASSIGN_OR_RETURN(int64_t renewed,
                          tables.attempts().RenewEveryLiveLease(
                              tables.now() + std::max(tables.options().lease_duration, tables.options().restart_grace)));
    RUNG_RETURN_IF_ERROR(tables.events().Append(domain::NewEvent(
        tables, event_kind::kLeasesReconciled,
        {domain::kCoordinatorActor,
         "coordinator started: " + std::to_string(renewed) + " live leases renewed for a full period"})));
    return renewed;
  });
}

StatusOr<std::optional<Timestamp>> TrialLifecycle::NextLeaseExpiry() const {
  return store_.Read([&](Tables& tables) { return tables.attempts().EarliestLiveExpiry(); });
}

Status TrialLifecycle::Retry(int64_t trial_id, const std::string& actor) {
  RUNG_RETURN_IF_ERROR(store_.Write([&](Tables& tables) -> Status {
    RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(trial_id));
    if (trial.state != TrialState::kFailed) {
      return Status::FailedPrecondition(tables.trials().Describe(trial) + " is " + TrialStateName(trial.state) +
                                        ": only a FAILED trial can be retried");
    }
    RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(trial.sweep_id));
    if (sweep.state == SweepState::kCancelled) {
      return Status::FailedPrecondition("sweep " + sweep.name + " was CANCELLED: resubmit its spec to run it again");
    }
    RUNG_RETURN_IF_ERROR(domain::RequeueByUser(tables, trial, {actor, "retried"}));
    return domain::SettleSweep(tables, trial.sweep_id, actor);
  }));
  ChangeSignals::Announce(signals_, true);
  return Status::Ok();
}

StatusOr<TrialRecord> TrialLifecycle::Get(int64_t trial_id) const {
  return store_.Read([&](Tables& tables) { return tables.trials().Get(trial_id); });
}

StatusOr<std::vector<TrialRecord>> TrialLifecycle::List(int64_t sweep_id, std::optional<TrialState> state) const {
  return store_.Read([&](Tables& tables) { return tables.trials().OfSweep(sweep_id, state); });
}

StatusOr<std::vector<AttemptRecord>> TrialLifecycle::Attempts(int64_t trial_id) const {
  return store_.Read([&](Tables& tables) { return tables.attempts().OfTrial(trial_id); });
}

}  // namespace rung
