// coordinator/domain/attempt_fence.h
//
// Attempt fencing: every report from a worker names (trial, attempt), and only the trial's current
// live attempt (LEASED or RUNNING) may change it. A report from an attempt the coordinator has
// already given up on (its lease expired, it was preempted, the trial was requeued and leased again)
// is rejected with FAILED_PRECONDITION and a message naming both attempts, so that a worker that
// lost its lease stops instead of overwriting its successor's results.
//
// Every report also names its worker; a report about an attempt leased to another worker is refused
// (CheckAttemptHolder), whether or not that attempt is still live.
//
// A report that repeats one already applied (the worker resent it because the answer was lost) is
// recognised by the digest stored with the attempt that it ended, and acknowledged without change.
//
// Thread safety: as tables.h (the caller holds the Store's mutex).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "coordinator/store/store_types.h"
#include "coordinator/store/tables/tables.h"

namespace rung::domain {

// `trial` is read without its config and assignments (TrialHeader): fences and transitions need neither.
struct LiveAttempt {
  TrialRecord trial;
  AttemptRecord attempt;
};

// The trial and its attempt, when `attempt` is the trial's live attempt. NOT_FOUND for an unknown
// trial; FAILED_PRECONDITION otherwise, saying which attempt is current and what became of `attempt`.
// `report` names the report in the message ("heartbeat", "completion", ...).
// `read`: the attempt's row as the caller read it in this transaction, so it is not read again.
StatusOr<LiveAttempt> LoadLiveAttempt(Tables& tables, int64_t trial_id, int64_t attempt, std::string_view report,
                                      const AttemptRecord* read = nullptr);

// OK when `worker_id` is the worker `attempt` was leased to, or empty (not checked). Otherwise
// FAILED_PRECONDITION naming the attempt's holder: a worker never reports about another's attempt.
// `report` names the report in the message.
Status CheckAttemptHolder(Tables& tables, int64_t trial_id, const AttemptRecord& attempt, const std::string& worker_id,
                          std::string_view report);

// CheckAttemptHolder for (trial, attempt) as stored; OK when that attempt does not exist (the
// fence answers for it).
Status CheckAttemptHolder(Tables& tables, int64_t trial_id, int64_t attempt, const std::string& worker_id,
                          std::string_view report);

// True when `attempt` of the trial already ended with `outcome` by a report with this digest.
StatusOr<bool> IsAppliedReport(Tables& tables, int64_t trial_id, int64_t attempt, TrialState outcome,
                               const std::string& report_digest);

}  // namespace rung::domain
