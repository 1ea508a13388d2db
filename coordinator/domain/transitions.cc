// coordinator/domain/transitions.cc
#include "coordinator/domain/transitions.h"

#include <optional>

#include "coordinator/store/event_log.h"

namespace rung::domain {
namespace {

std::optional<int64_t> AttemptOrNull(int64_t attempt) {
  return attempt > 0 ? std::optional<int64_t>(attempt) : std::nullopt;
}

// Why the sweep moved to its settled state, counted over the whole sweep.
StatusOr<std::string> SettleReason(Tables& tables, const SweepRecord& sweep) {
  RUNG_ASSIGN_OR_RETURN(TrialCounts counts, tables.trials().Counts(sweep.id));
  if (counts.failed >= sweep.policy.max_failed) {
    return std::to_string(counts.failed) + " trials failed for good (policy.max_failed is " +
           std::to_string(sweep.policy.max_failed) + "): no new leases until a retry";
  }
  if (counts.unfinished == 0) {
    return "every trial finished: " + std::to_string(counts.succeeded) + " of " + std::to_string(counts.total) +
           " succeeded, " + std::to_string(counts.failed) + " failed for good";
  }
  return std::to_string(counts.unfinished) + " trials to run";
}

}  // namespace

std::string WorkerActor(const std::string& worker_id) { return "worker:" + worker_id; }

EventRecord NewEvent(Tables& tables, const char* kind, const Cause& cause, const TrialRecord* trial) {
  EventRecord event;
  event.at = tables.now();
  event.kind = kind;
  event.actor = cause.actor;
  event.reason = cause.reason;
  if (trial != nullptr) {
    event.sweep_id = trial->sweep_id;
    event.trial_id = trial->id;
    event.from_state = TrialStateName(trial->state);
  }
  return event;
}


Status MoveTrial(Tables& tables, TrialRecord& trial, TrialState to, const Cause& cause,
                 std::optional<EarlyStop> why) {
  RUNG_RETURN_IF_ERROR(tables.trials().SetState(trial.id, to, tables.now()));
  if (to != TrialState::kEarlyStopped) why.reset();
  if (trial.early_stop != why) {
    RUNG_RETURN_IF_ERROR(tables.trials().SetEarlyStop(trial.id, why));
    trial.early_stop = why;
  }
  EventRecord event = NewEvent(tables, event_kind::kTrialState, cause, &trial);
  event.attempt = AttemptOrNull(trial.attempt);
  event.to_state = TrialStateName(to);
  trial.state = to;
  trial.updated_at = tables.now();
  return tables.events().Append(event);
}

Status MoveSweep(Tables& tables, SweepRecord& sweep, SweepState to, const Cause& cause) {
  RUNG_RETURN_IF_ERROR(tables.sweeps().SetState(sweep.id, to, tables.now()));
  EventRecord event = NewEvent(tables, event_kind::kSweepState, cause);
  event.sweep_id = sweep.id;
  event.from_state = SweepStateName(sweep.state);
  event.to_state = SweepStateName(to);
  sweep.state = to;
  sweep.updated_at = tables.now();
  return tables.events().Append(event);
}

Status NoteTrial(Tables& tables, const TrialRecord& trial, const char* kind, const Cause& cause) {
  EventRecord event = NewEvent(tables, kind, cause, &trial);
  event.attempt = trial.attempt;
  event.to_state = event.from_state;
  return tables.events().Append(event);
}

Status EndAttempt(Tables& tables, const TrialRecord& trial, TrialState outcome, const std::string& reason,
                  const std::string& report_digest) {
  return tables.attempts().End(trial.id, trial.attempt, outcome, reason, report_digest, tables.now());
}

Status RequeueThrough(Tables& tables, TrialRecord& trial, TrialState via, const Cause& cause) {
  RUNG_RETURN_IF_ERROR(MoveTrial(tables, trial, via, cause));
  const std::string attempt = std::to_string(trial.attempt);
  return MoveTrial(tables, trial, TrialState::kPending,
                   {kCoordinatorActor, "requeued after attempt " + attempt + " ended " + TrialStateName(via) +
                                           "; the next attempt may resume from attempt " + attempt + "'s checkpoints"});
}

Status RequeueByUser(Tables& tables, TrialRecord& trial, const Cause& cause) {
  RUNG_RETURN_IF_ERROR(tables.trials().ClearFailures(trial.id));
  trial.failures = 0;
  // A closed search opens again: the requeued trial's result may move its cell's best.
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(trial.sweep_id));
  if (sweep.tuning == "complete") RUNG_RETURN_IF_ERROR(tables.sweeps().SetTuning(sweep.id, "searching", tables.now()));
  // A closed precision aim opens again likewise: the trial's result moves its intervals.
  if (!sweep.precision.empty() && sweep.precision != "aiming") {
    RUNG_RETURN_IF_ERROR(tables.sweeps().SetPrecision(sweep.id, "aiming", tables.now()));
  }
  return MoveTrial(tables, trial, TrialState::kPending, cause);
}

Status CancelTrial(Tables& tables, TrialRecord& trial, const Cause& cause) {
  if (IsLive(trial.state)) {
    RUNG_RETURN_IF_ERROR(EndAttempt(tables, trial, TrialState::kCancelled, cause.reason, /*report_digest=*/""));
  }
  return MoveTrial(tables, trial, TrialState::kCancelled, cause);
}

Status StopTrialEarly(Tables& tables, TrialRecord& trial, EarlyStop why, const Cause& cause) {
  if (IsLive(trial.state)) {
    RUNG_RETURN_IF_ERROR(EndAttempt(tables, trial, TrialState::kEarlyStopped, cause.reason, /*report_digest=*/""));
  }
  return MoveTrial(tables, trial, TrialState::kEarlyStopped, cause, why);
}

Status SettleSweep(Tables& tables, int64_t sweep_id, const std::string& actor) {
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(sweep_id));
  if (sweep.state == SweepState::kCancelled) return Status::Ok();
  // Settling runs on every trial that ends: decide with index probes (cost independent of the
  // sweep's size) and count the whole sweep only for the reason of a state change.
  RUNG_ASSIGN_OR_RETURN(int64_t failed, tables.trials().CountFailed(sweep_id));
  RUNG_ASSIGN_OR_RETURN(bool unfinished, tables.trials().HasUnfinished(sweep_id));
  SweepState target;
  if (failed >= sweep.policy.max_failed) {
    target = SweepState::kFailed;
  } else if (!unfinished && sweep.tuning != "searching" && sweep.precision != "aiming") {
    target = failed == 0 ? SweepState::kSucceeded : SweepState::kFailed;
  } else {
    target = sweep.state == SweepState::kPaused ? SweepState::kPaused : SweepState::kActive;
  }
  if (target == sweep.state) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(std::string reason, SettleReason(tables, sweep));
  return MoveSweep(tables, sweep, target, {actor, reason});
}

}  // namespace rung::domain
