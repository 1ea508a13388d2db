// coordinator/server/lease_broker.cc
#include "coordinator/server/lease_broker.h"

#include <algorithm>

namespace rung::server {

StatusOr<std::optional<rung::Lease>> LeaseBroker::Look(const LeaseAsk& ask) {
  StatusOr<GangPoll> gang = gangs_.Poll(ask.worker_id);
  if (!gang.ok()) return gang.status();
  if (gang->lease) return gang->lease;
  if (gang->reserved) return std::optional<rung::Lease>();
  StatusOr<std::optional<rung::Lease>> lease = trials_.LeaseNextTrial(ask.worker_id, ask.free_cpus, ask.free_gpus);
  if (!lease.ok() || lease->has_value()) return lease;
  StatusOr<GangPoll> joined = gangs_.Join(ask.worker_id, ask.free_cpus, ask.free_gpus);
  if (!joined.ok()) return joined.status();
  if (joined->formed) work_.Notify();  // the other members take their ranks
  return joined->lease;
}

StatusOr<std::optional<rung::Lease>> LeaseBroker::Acquire(const LeaseAsk& ask, std::chrono::steady_clock::time_point deadline,
                                                  const std::function<bool()>& cancelled) {
  uint64_t seen = work_.generation();
  while (true) {
    if (work_.closed()) return Status::Unavailable("the coordinator is shutting down; lease from the restarted one");
    RUNG_RETURN_IF_ERROR(reaper_.ExpireDue().status());
    StatusOr<std::optional<rung::Lease>> lease = Look(ask);
    if (!lease.ok() || lease->has_value()) {
      if (lease.ok()) reaper_.Poke();
      return lease;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || (cancelled && cancelled())) return std::optional<rung::Lease>();
    seen = work_.WaitForChange(seen, std::min(deadline, now + kCancelCheck));
  }
}

}  // namespace rung::server
