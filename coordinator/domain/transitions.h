// coordinator/domain/transitions.h
//
// The state changes the managers share, each writing the new state together with its event row
// (event_log.h). They run inside the caller's transaction (Store::Write) through its Tables and
// never commit; a caller that gets an error returns it, and the whole transaction rolls back.
//
// Sweep states follow from the trials (SettleSweep): a sweep is FAILED once policy.max_failed
// trials failed for good, SUCCEEDED once every trial is terminal and none failed, FAILED when every
// trial is terminal and some failed (but not while the sweep's search is open: its tuner may
// still add trials, sweep_tuner.h), and back to ACTIVE when a retry or a resubmission gives a
// finished sweep work again. PAUSED and CANCELLED are the user's and only change on a user's word
// (a PAUSED sweep still ends SUCCEEDED or FAILED when its last trial ends).
//
// Thread safety: as tables.h (the caller holds the Store's mutex).
#pragma once

#include <optional>
#include <string>

#include "coordinator/store/store_types.h"
#include "coordinator/store/tables/tables.h"

namespace rung::domain {

inline constexpr char kCoordinatorActor[] = "coordinator";

// "worker:<id>": how events name a worker as the actor.
std::string WorkerActor(const std::string& worker_id);

// Who made a change and why.
struct Cause {
  std::string actor;
  std::string reason;
};

// An event of `kind` at the transaction's time, by `cause`; about `trial` (its sweep, id and state
// as from_state) when given.
EventRecord NewEvent(Tables& tables, const char* kind, const Cause& cause, const TrialRecord* trial = nullptr);

// Sets the trial's state and updated_at (in the table and in `trial`) and records a trial_state event.
// The trial's early_stop follows: `why` when it moves to EARLY_STOPPED, cleared otherwise.
Status MoveTrial(Tables& tables, TrialRecord& trial, TrialState to, const Cause& cause,
                 std::optional<EarlyStop> why = std::nullopt);

// Sets the sweep's state and updated_at (in the table and in `sweep`) and records a sweep_state event.
Status MoveSweep(Tables& tables, SweepRecord& sweep, SweepState to, const Cause& cause);

// Records an event of `kind` about the trial that leaves its state as it is (gangs, waiting reasons).
Status NoteTrial(Tables& tables, const TrialRecord& trial, const char* kind, const Cause& cause);

// Ends the trial's current attempt with `outcome`; `report_digest` identifies the report that ended
// it (empty when the coordinator ended it), so an identical duplicate can be recognised.
Status EndAttempt(Tables& tables, const TrialRecord& trial, TrialState outcome, const std::string& reason,
                  const std::string& report_digest);

// Moves a trial whose attempt just ended through `via` (PREEMPTED, STALE or FAILED) back to PENDING:
// two events, so the log shows both what happened and that it was requeued.
Status RequeueThrough(Tables& tables, TrialRecord& trial, TrialState via, const Cause& cause);

// A FAILED or CANCELLED trial back to PENDING on a user's word (retry, resubmission), its failure
// count cleared so that it gets policy.max_retries again; a closed search of its sweep opens again.
Status RequeueByUser(Tables& tables, TrialRecord& trial, const Cause& cause);

// Cancels an unfinished trial: its live attempt (if any) ends CANCELLED, the trial becomes CANCELLED.
Status CancelTrial(Tables& tables, TrialRecord& trial, const Cause& cause);

// Stops a trial early (sweep_tuner.h): its live attempt (if any) ends EARLY_STOPPED, the trial
// becomes EARLY_STOPPED, for good, stopped for `why`. The cause's reason says what decided it, in words.
Status StopTrialEarly(Tables& tables, TrialRecord& trial, EarlyStop why, const Cause& cause);

// Brings the sweep's state in line with its trials (see above); records a sweep_state event if it
// changed. `actor` is whoever's action prompted the check.
Status SettleSweep(Tables& tables, int64_t sweep_id, const std::string& actor);

}  // namespace rung::domain
