// coordinator/domain/lease_broker.cc
#include "coordinator/domain/lease_broker.h"

#include <algorithm>

namespace rung {

StatusOr<std::optional<Lease>> LeaseBroker::LookIn(Tables& tables, const LeaseAsk& ask, bool* gang_formed) const {
  *gang_formed = false;
  RUNG_ASSIGN_OR_RETURN(std::optional<WorkerRecord> worker, tables.workers().Find(ask.worker_id));
  if (worker && worker->quarantined_at) {  // worker_quarantine.h: it waits out its polls
    RUNG_RETURN_IF_ERROR(tables.workers().Touch(ask.worker_id, tables.now()).status());
    return std::optional<Lease>();
  }
  RUNG_ASSIGN_OR_RETURN(GangPoll gang, gangs_.PollIn(tables, ask.worker_id));
  if (gang.lease) return gang.lease;
  if (gang.reserved) return std::optional<Lease>();
  RUNG_ASSIGN_OR_RETURN(std::optional<Lease> lease,
                        trials_.LeaseNextTrialIn(tables, ask.worker_id, ask.free_cpus, ask.free_gpus));
  if (lease) return lease;
  RUNG_ASSIGN_OR_RETURN(GangPoll joined, gangs_.JoinIn(tables, ask.worker_id, ask.free_cpus, ask.free_gpus));
  *gang_formed = joined.formed;
  return joined.lease;
}

void LeaseBroker::Leased(const std::optional<Lease>& lease, bool gang_formed) {
  if (gang_formed) {
    signals_.WorkQueued();  // the other members take their ranks
    reaper_.Poke();
  } else if (lease) {
    signals_.Changed();
    reaper_.Poke(lease->lease_expires_at);
  }
}

StatusOr<std::optional<Lease>> LeaseBroker::Look(const LeaseAsk& ask) {
  bool gang_formed = false;
  StatusOr<std::optional<Lease>> lease =
      store_.Write([&](Tables& tables) { return LookIn(tables, ask, &gang_formed); });
  if (lease.ok()) Leased(*lease, gang_formed);
  return lease;
}

StatusOr<std::optional<Lease>> LeaseBroker::Acquire(const LeaseAsk& ask, std::chrono::steady_clock::time_point deadline,
                                                  const std::function<bool()>& cancelled) {
  uint64_t seen = signals_.work().generation();
  while (true) {
    if (signals_.work().closed()) return Status::Unavailable("the coordinator is shutting down; lease from the restarted one");
    // Checked before every look, not only after one: the wake-up that brings work may come after the
    // caller went away, and a trial leased to it would wait out its lease.
    if (cancelled && cancelled()) return std::optional<Lease>();
    StatusOr<std::optional<Lease>> lease = Look(ask);
    if (lease.ok() && lease->has_value() && cancelled && cancelled() && (*lease)->rendezvous.empty()) {
      // The caller went away while the lease was committed: its answer would be lost and the trial
      // would wait out its lease leased to nobody. An ordinary lease is handed back at once, ended
      // PREEMPTED before anything ran, so that the trial is PENDING for the next ask; a gang's rank
      // waits for its gang.
      AttemptEnding handed_back;
      handed_back.outcome = TrialState::kPreempted;
      handed_back.reason = "handed back: the Lease call that carried it was cancelled before its answer";
      handed_back.worker_id = ask.worker_id;
      trials_.EndAttempt((*lease)->trial_id, (*lease)->attempt, handed_back).status().IgnoreError();
      return std::optional<Lease>();
    }
    if (!lease.ok() || lease->has_value()) return lease;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::optional<Lease>();
    seen = signals_.work().WaitForChange(seen, std::min(deadline, now + kCancelCheck));
  }
}

}  // namespace rung
