// coordinator/domain/trial_lifecycle.h
//
// A trial's life after submission: leases, the reports of the worker that holds one, lease expiry,
// and the coordinator's reconciliation after a restart (docs/design.md "Trial lifecycle"):
//
//   PENDING --lease--> LEASED --MarkRunning--> RUNNING --Complete--> SUCCEEDED
//      ^                  |                       |------Fail------> FAILED (for good) or back to PENDING
//      |                  |                       |----Preempted---> PREEMPTED -> PENDING
//      +------------------+--- lease expired ---> STALE -> PENDING
//
// Each lease starts a new attempt (1, 2, ...) with its own row in attempts and its own checkpoint
// folder, <artifact_root>/<sweep>/<trial_index>/attempt-<n>; a requeued trial's next attempt is told
// the earlier attempts' folders, newest first, to resume from.
//
// Fencing: every report names (trial, attempt). Only the trial's live attempt (LEASED or RUNNING)
// may report; any other gets FAILED_PRECONDITION naming both attempts (the worker should stop). A
// report that names its worker (MetricBatch::worker_id, AttemptEnding::worker_id, Heartbeat's
// worker_id) is refused with FAILED_PRECONDITION when the attempt was leased to another worker. An
// identical repeat of a report already applied (MarkRunning, Complete, Fail, Preempted) is OK and
// changes nothing, so a worker may resend a report whose answer it did not get.
//
// Gangs (gang_leases.h): an attempt leased to several workers, one rank each, is held by rank 0's
// worker (reports, results, the attempt's lease); the other members heartbeat their own rank's lease
// and end only their rank (SUCCEEDED, without results) or the whole attempt (FAILED, PREEMPTED, with
// the rank named in the reason). A member rank's lease expiring ends the attempt STALE; the other
// members are then fenced like any worker whose attempt ended.
//
// Failures: a FAILED attempt requeues the trial while its failures <= policy.max_retries; after that
// the trial is FAILED for good, which counts against the sweep's policy.max_failed; reaching it marks
// the sweep FAILED (no new leases). PREEMPTED and STALE attempts never count as failures.
//
// Every transition is one transaction with its event rows; a call that returns OK has committed,
// and then signals (change_signals.h): WorkQueued when a trial went back to PENDING, Changed for any
// other change. Times come from the Store's clock; lease periods from StoreOptions::lease_duration.
//
// Example (a worker's loop, as the gRPC service drives it):
//   TrialLifecycle trials(store);
//   StatusOr<std::optional<Lease>> lease = trials.LeaseNextTrial("node7-gpu0", /*free_cpus=*/8, /*free_gpus=*/1);
//   if (!lease.ok() || !*lease) return;
//   const Lease& leased = **lease;
//   RUNG_RETURN_IF_ERROR(trials.MarkRunning(leased.trial_id, leased.attempt, provenance));
//   ... trials.Heartbeat(leased.trial_id, leased.attempt) every few seconds ...
//   RUNG_RETURN_IF_ERROR(trials.Complete(leased.trial_id, leased.attempt, results));
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/domain/change_signals.h"
#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung {

class TrialLifecycle {
 public:
  // `signals` (may be null: nothing is signalled) must outlive the manager.
  explicit TrialLifecycle(Store& store, ChangeSignals* signals = nullptr) : store_(store), signals_(signals) {}

  // ---------------------------------------------------------------------------------- worker side

  // Leases the highest-priority PENDING trial (oldest first among equals) of an ACTIVE sweep whose
  // cpus and gpus fit in what the worker has free: the trial becomes LEASED in a new attempt whose
  // lease lasts lease_duration. nullopt when nothing fits. NOT_FOUND for an unregistered worker.
  // A trial whose last attempt failed on this worker for a worker's reason (worker_quarantine.h)
  // is leased to it only when nothing else fits (then the one it failed longest ago), so that its
  // next attempts tell a broken worker from a broken trial. A worker that registered a stops_at is
  // leased the first such trial that reaches its next checkpoint before then (allocation_fit.h); the
  // others stay PENDING.
  StatusOr<std::optional<Lease>> LeaseNextTrial(const std::string& worker_id, int64_t free_cpus, int64_t free_gpus);

  // LEASED -> RUNNING: the trainer started. `provenance` (rung-train's first record) is stored with
  // the attempt; null when not known.
  Status MarkRunning(int64_t trial_id, int64_t attempt, const nlohmann::json& provenance);

  // Renews the attempt's lease for lease_duration from now. A cancelled attempt gets OK with
  // cancel = true and the cancellation's reason (stop the trainer); any other attempt that is not
  // live is FAILED_PRECONDITION, and so is a heartbeat from a worker (`worker_id`, "" = not checked)
  // the attempt was not leased to.
  StatusOr<HeartbeatReply> Heartbeat(int64_t trial_id, int64_t attempt, const std::string& worker_id = "");

  // Commits one batch of a live attempt's output in one transaction: its metric points (a point
  // already stored is left as it is), its results (a final record's), its log lines, and, when it
  // carries the provenance, LEASED -> RUNNING (as MarkRunning). Batches of an attempt are numbered
  // 1, 2, ...: a batch already committed is acknowledged again with duplicate = true and changes
  // nothing (also after the attempt ended); one that skips a number is OUT_OF_RANGE; any other
  // batch of an attempt that is not live is FAILED_PRECONDITION. INVALID_ARGUMENT for a sequence
  // below 1 or a bad point.
  StatusOr<BatchAck> ReportBatch(const MetricBatch& batch);

  // Ends the live attempt as its worker reported: SUCCEEDED (its results are those its batches
  // brought, with the trainer's final record; the sweep SUCCEEDED when this was its last unfinished
  // trial and none failed), FAILED (requeued while retries remain) or PREEMPTED (requeued). The
  // same report again is acknowledged with duplicate = true and changes nothing.
  // FAILED_PRECONDITION for an attempt that is not live, when batches up to
  // ending.last_batch_sequence were not all committed, or for SUCCEEDED when none of the attempt's
  // batches held results (no final record); INVALID_ARGUMENT for another outcome. Returns the
  // trial's state afterwards.
  //
  // `final_batch`, when given, is the attempt's last batch (Complete() below gives one; the wire's
  // Complete does not): it is committed as ReportBatch would, in the same transaction as the
  // ending, before it (a batch already committed is skipped; its sequence must be
  // ending.last_batch_sequence). Any error of either leaves both unwritten.
  StatusOr<EndingAck> EndAttempt(int64_t trial_id, int64_t attempt, const AttemptEnding& ending,
                                 const MetricBatch* final_batch = nullptr);

  // LeaseNextTrial and EndAttempt inside the caller's Store::Write transaction: for callers that
  // commit several steps at once (LeaseBroker's look: gang poll, lease, gang join). Same results and
  // errors; an error leaves the caller's transaction to roll back (or to
  // undo the step: Tables::Tentatively). They signal nothing: after the commit, the caller calls
  // Ended() for EndAttemptIn's answer (LeaseBroker signals its leases).
  StatusOr<std::optional<Lease>> LeaseNextTrialIn(Tables& tables, const std::string& worker_id, int64_t free_cpus,
                                                  int64_t free_gpus) const;
  StatusOr<EndingAck> EndAttemptIn(Tables& tables, int64_t trial_id, int64_t attempt, const AttemptEnding& ending,
                                   const MetricBatch* final_batch) const;
  // Signals what a committed ending `ack` changed (nothing for a repeat).
  void Ended(const EndingAck& ack) const;

  // EndAttempt with SUCCEEDED and these results as the attempt's last batch (the next after those
  // committed; for an attempt that ended already, its last: a repeat, acknowledged again).
  Status Complete(int64_t trial_id, int64_t attempt, const TrialResults& results);

  // EndAttempt with FAILED. Returns the trial's state afterwards: PENDING when it will be retried,
  // FAILED when it failed for good (for a repeated report: its state now).
  StatusOr<TrialState> Fail(int64_t trial_id, int64_t attempt, const std::string& reason);

  // EndAttempt with PREEMPTED: the worker stopped the trainer after a checkpoint (SIGTERM, SIGUSR1).
  Status Preempted(int64_t trial_id, int64_t attempt, const std::string& reason);

  // ----------------------------------------------------------------------------- coordinator side

  // Every live attempt whose lease expired by now ends STALE and its trial goes back to PENDING.
  // Returns the attempts it expired.
  StatusOr<std::vector<AttemptKey>> ExpireLeases();

  // Call once after the coordinator starts, before ExpireLeases: every live lease gets the longer of
  // lease_duration and restart_grace (StoreOptions) from now, so that workers that kept training
  // while the coordinator was down are not declared stale before they could reach it. Returns how
  // many leases it renewed.
  StatusOr<int64_t> RestartReconcile();

  // When the earliest live lease expires (nullopt: none), for scheduling the next ExpireLeases.
  StatusOr<std::optional<Timestamp>> NextLeaseExpiry() const;

  // ------------------------------------------------------------------------------------ user side

  // A FAILED trial back to PENDING with a fresh retry budget (a FAILED sweep becomes ACTIVE when this
  // brings it below max_failed). FAILED_PRECONDITION for a trial that is not FAILED, or whose sweep
  // was cancelled.
  Status Retry(int64_t trial_id, const std::string& actor);

  // ---------------------------------------------------------------------------------------- reads

  StatusOr<TrialRecord> Get(int64_t trial_id) const;  // NOT_FOUND
  // The sweep's trials by trial_index, all or those in `state`.
  StatusOr<std::vector<TrialRecord>> List(int64_t sweep_id, std::optional<TrialState> state = std::nullopt) const;
  // The trial's attempts, oldest first.
  StatusOr<std::vector<AttemptRecord>> Attempts(int64_t trial_id) const;

 private:

  Store& store_;
  ChangeSignals* const signals_;
};

}  // namespace rung
