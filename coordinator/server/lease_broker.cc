// coordinator/server/lease_broker.cc
#include "coordinator/server/lease_broker.h"

#include <algorithm>

namespace rung::server {

StatusOr<std::optional<rung::Lease>> LeaseBroker::LookIn(Database& db, const LeaseAsk& ask, Timestamp now,
                                                         bool* gang_formed) const {
  *gang_formed = false;
  StatusOr<GangPoll> gang = gangs_.PollIn(db, ask.worker_id, now);
  if (!gang.ok()) return gang.status();
  if (gang->lease) return gang->lease;
  if (gang->reserved) return std::optional<rung::Lease>();
  StatusOr<std::optional<rung::Lease>> lease =
      trials_.LeaseNextTrialIn(db, ask.worker_id, ask.free_cpus, ask.free_gpus, now);
  if (!lease.ok() || lease->has_value()) return lease;
  StatusOr<GangPoll> joined = gangs_.JoinIn(db, ask.worker_id, ask.free_cpus, ask.free_gpus, now);
  if (!joined.ok()) return joined.status();
  *gang_formed = joined->formed;
  return joined->lease;
}

void LeaseBroker::Leased(const std::optional<rung::Lease>& lease, bool gang_formed) {
  if (gang_formed) {
    work_.Notify();  // the other members take their ranks
    reaper_.Poke();
  } else if (lease) {
    reaper_.Poke(lease->lease_expires_at);
  }
}

StatusOr<std::optional<rung::Lease>> LeaseBroker::Look(const LeaseAsk& ask) {
  bool gang_formed = false;
  StatusOr<std::optional<rung::Lease>> lease =
      store_.Write([&](Database& db, Timestamp now) { return LookIn(db, ask, now, &gang_formed); });
  if (lease.ok()) Leased(*lease, gang_formed);
  return lease;
}

StatusOr<std::optional<rung::Lease>> LeaseBroker::Acquire(const LeaseAsk& ask, std::chrono::steady_clock::time_point deadline,
                                                  const std::function<bool()>& cancelled) {
  uint64_t seen = work_.generation();
  while (true) {
    if (work_.closed()) return Status::Unavailable("the coordinator is shutting down; lease from the restarted one");
    RUNG_RETURN_IF_ERROR(reaper_.ExpireDue().status());
    StatusOr<std::optional<rung::Lease>> lease = Look(ask);
    if (!lease.ok() || lease->has_value()) return lease;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || (cancelled && cancelled())) return std::optional<rung::Lease>();
    seen = work_.WaitForChange(seen, std::min(deadline, now + kCancelCheck));
  }
}

}  // namespace rung::server
