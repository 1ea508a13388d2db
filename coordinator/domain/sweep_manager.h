// coordinator/domain/sweep_manager.h
//
// Sweeps: submitting a spec's trials, resubmitting a changed spec under the same name, and the
// user's controls (pause, resume, cancel, retry failed trials), each one transaction with its events.
//
// Resubmission matches trials by identity (the hash of everything that changes a result), so a
// resubmitted spec never reruns a finished cell:
//   - SUCCEEDED and EARLY_STOPPED cells are skipped;
//   - FAILED or CANCELLED cells are requeued (PENDING, failure count cleared);
//   - PENDING cells take the new spec's config and priority (resources, cadence may have changed);
//     LEASED and RUNNING ones carry on untouched;
//   - new identities are added, with trial indexes after the sweep's last;
//   - identities the spec no longer has are reported as removed; unfinished ones are CANCELLED,
//     finished ones keep their results; the trials a search added (SweepSubmission::tuned_key)
//     are kept whether listed or not.
// The sweep row takes the new spec text, hash, policy and baseline; a CANCELLED sweep becomes ACTIVE
// again, a PAUSED one stays PAUSED, and the state then follows the trials (transitions.h).
// An identity given twice in one submission (two spellings of the same model) is stored once.
//
// Example:
//   SweepManager sweeps(store);
//   StatusOr<SubmitResult> submitted = sweeps.Submit(submission, "user:ada");
//   RUNG_RETURN_IF_ERROR(sweeps.Pause(submitted->sweep_id, "user:ada", "cluster maintenance"));
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "coordinator/domain/change_signals.h"
#include "coordinator/domain/transitions.h"
#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung {

class SweepManager {
 public:
  // `signals` (may be null: nothing is signalled) must outlive the manager. After each change it
  // committed: WorkQueued when trials may have become leasable (submitted, resumed, retried), else
  // Changed.
  explicit SweepManager(Store& store, ChangeSignals* signals = nullptr) : store_(store), signals_(signals) {}

  // Submits (or resubmits, see above) a sweep. INVALID_ARGUMENT for a bad name (letters, digits, '-',
  // '_', '.'; it names a folder), no trials, or a trial without identity or with negative resources.
  StatusOr<SubmitResult> Submit(const SweepSubmission& submission, const std::string& actor);
  // What Submit would do, without doing it (a dry run): the same result, nothing written. The
  // trial ids of cells it would add are the ids they would get now.
  StatusOr<SubmitResult> Preview(const SweepSubmission& submission, const std::string& actor) const;

  // NOT_FOUND for an unknown sweep.
  StatusOr<SweepRecord> Get(int64_t sweep_id) const;
  StatusOr<SweepRecord> FindByName(const std::string& name) const;
  StatusOr<std::vector<SweepRecord>> List() const;
  // How many of the sweep's trials are in each state (states with none are left out).
  StatusOr<std::map<TrialState, int64_t>> CountTrialsByState(int64_t sweep_id) const;

  // ACTIVE -> PAUSED: no new leases; leased and running trials carry on and may finish. Pausing a
  // PAUSED sweep is OK; any other state is FAILED_PRECONDITION. `reason` may be empty.
  Status Pause(int64_t sweep_id, const std::string& actor, const std::string& reason = "");
  // PAUSED -> ACTIVE. Resuming an ACTIVE sweep is OK; any other state is FAILED_PRECONDITION.
  Status Resume(int64_t sweep_id, const std::string& actor, const std::string& reason = "");
  // Every unfinished trial CANCELLED (live attempts learn it from their next heartbeat), the sweep
  // CANCELLED. Cancelling a CANCELLED sweep is OK; a SUCCEEDED one is FAILED_PRECONDITION.
  Status Cancel(int64_t sweep_id, const std::string& actor, const std::string& reason = "");
  // Every FAILED trial back to PENDING with a fresh retry budget; a FAILED sweep becomes ACTIVE again.
  // Returns how many were requeued. FAILED_PRECONDITION for a CANCELLED sweep (resubmit it instead).
  StatusOr<int64_t> RetryFailed(int64_t sweep_id, const std::string& actor);
  // The same for the named trials of the sweep (all FAILED ones when `trial_ids` is empty), all or
  // nothing: FAILED_PRECONDITION when one is not FAILED or the sweep is CANCELLED, NOT_FOUND for an
  // unknown trial, INVALID_ARGUMENT for a trial of another sweep. Returns the requeued trials' ids.
  StatusOr<std::vector<int64_t>> RetryTrials(int64_t sweep_id, const std::vector<int64_t>& trial_ids,
                                             const std::string& actor, const std::string& reason = "");

  // Free-form labels on a sweep (owner, paper, ...); setting a key again replaces its value.
  Status SetTag(int64_t sweep_id, const std::string& key, const std::string& value);
  StatusOr<std::map<std::string, std::string>> Tags(int64_t sweep_id) const;

 private:
  // ACTIVE <-> PAUSED on a user's word: OK when already `to`, FAILED_PRECONDITION unless `from`.
  Status Toggle(int64_t sweep_id, SweepState from, SweepState to, const domain::Cause& cause);

  Store& store_;
  ChangeSignals* const signals_;
};

}  // namespace rung
