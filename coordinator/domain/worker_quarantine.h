// coordinator/domain/worker_quarantine.h
//
// Worker quarantine: a worker whose attempts keep failing for reasons of the worker stops leasing,
// so that one broken machine does not burn a sweep's retries.
//
// The rule. An attempt ending counts against its worker (a worker fault) when it is FAILED with a
// trainer exit code that says more about the machine than about the trial:
//   - 127: rung-train could not be started (missing, not executable, the agent could not spawn it);
//   - a signal (exit code -N): the agent sends signals only to preempt, cancel or fence, and reports
//     none of those as FAILED, so a FAILED attempt killed by a signal was killed by someone else
//     (the kernel's OOM killer, a crash, an operator);
//   - 1 (an unexpected error) and 4 (data or checkpoint unusable: a missing data folder, a full disk).
// Exit 2 (bad config) and 3 (training diverged) are the trial's own and never count; neither do
// PREEMPTED or SUCCEEDED endings, which break a run of faults.
// A worker is quarantined when its kFaultsInARow newest reported endings are all worker faults,
// reported within kFaultWindow of each other, and either span at least two different trials or
// are all of them exit 127 or a signal (exit 1 and 4 of one trial, again and again, are more likely
// that trial's doing, and its own max_retries handles it). So that a broken worker meets several
// trials before it burns one trial's retries, a trial whose last attempt was such a fault on a
// worker is leased to that worker only when nothing else fits (TrialLifecycle::LeaseNextTrial).
//
// A quarantine takes every fault of the run off its trial's failures (they do not count against
// policy.max_retries); a trial that had failed for good because of them is requeued. The worker
// leases nothing until a user releases it (Release) or it registers again (its agent restarted).
// Gangs: each rank's worker reports for itself, and the rank whose worker fails ends the attempt, so
// it is that worker whose ending counts.
//
// Thread safety: as tables.h (RecordEnding runs inside the caller's transaction).
#pragma once

#include <chrono>
#include <string>

#include "coordinator/store/store_types.h"
#include "coordinator/store/tables/tables.h"
#include "core/common/status.h"

namespace rung::domain {

inline constexpr int kFaultsInARow = 3;
inline constexpr std::chrono::minutes kFaultWindow{10};

// Whether an ending of `outcome` with `exit_code` counts against the worker (see above).
bool IsWorkerFault(TrialState outcome, int exit_code);

// What RecordEnding did.
struct EndingVerdict {
  bool quarantined = false;  // this ending completed a run of faults: the worker is quarantined now
  std::string reason;        // why (set when quarantined)
  // Failures taken off `trial_id`'s count (in the table): the caller's copy of the trial subtracts them.
  int refunded_of_trial = 0;
};

// Records the ending `worker_id` reported for the attempt (trial_id, attempt) and applies the rule:
// when it quarantines the worker, the run's faults are taken off their trials' failures (the trial
// of this ending included: call it before deciding whether the trial retries), trials other than
// `trial_id` that had failed for good are requeued, and a worker_quarantined event is recorded. A
// fault reported by a worker already quarantined (an attempt that was running when it was) is
// taken off its trial's failures too.
StatusOr<EndingVerdict> RecordEnding(Tables& tables, const std::string& worker_id, int64_t trial_id, int64_t attempt,
                                     TrialState outcome, int exit_code);

}  // namespace rung::domain
