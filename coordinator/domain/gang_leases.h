// coordinator/domain/gang_leases.h
//
// Data-parallel trials leased to several workers at once: a GANG. A PENDING trial with
// resources.world_size W > 1 whose whole need (cpus x W, gpus x W) fits no live worker is leased
// rank by rank, one rank per worker, all or nothing:
//
//   1. Reservation: a polling worker with one rank's resources free (Join) reserves the next rank
//      of the highest-priority such trial (a gang_reserved event); a worker that registered a
//      stops_at, only of a trial that fits before then (allocation_fit.h). A worker that holds a
//      reservation takes nothing else; its Lease long-poll waits (Poll says reserved).
//   2. Formation: the W-th reservation leases the trial in one transaction: a new attempt whose
//      holder (attempts.worker_id) is rank 0, the first worker that reserved; one attempt_ranks
//      row per rank with its worker and the rendezvous "<rank 0's registered host>:<port>" (the
//      port from StoreOptions' rendezvous range, per attempt); the reservations dropped; the trial
//      LEASED with a trial_state event naming every rank's worker. The forming worker gets its
//      rank's lease at once, the others on their next Poll (each rank handed out once).
//   3. Release: a gang not full gang_formation_timeout after its first reservation, or one whose
//      reserving worker stopped polling for that long, or whose trial is no longer leasable, is
//      released (a gang_released event): its workers are free again, the trial stays PENDING.
//
// Running (trial_lifecycle.h): rank 0 reports metrics and the results; every rank heartbeats its
// own lease; a FAILED or PREEMPTED report of any rank, or any rank's lease expiring, ends the
// attempt for all (the others are fenced on their next heartbeat), and the trial is requeued to
// resume from rank 0's checkpoints. A rank > 0 that finished reports SUCCEEDED without results.
//
// Waiting reasons: a PENDING trial that the registered workers can never hold (no worker holds
// it all, and fewer than W hold one rank) gets a trial_waiting event saying so, shown as its state
// reason (`rung trials`, `rung show`), once per distinct reason.
//
// Example (what LeaseBroker does on each look):
//   GangLeases gangs(store);
//   StatusOr<GangPoll> poll = gangs.Poll("node7");
//   if (poll.ok() && poll->lease) return *poll->lease;          // a rank of a formed gang
//   if (poll.ok() && !poll->reserved) { ... LeaseNextTrial ..., then gangs.Join("node7", 4, 0) }
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <optional>
#include <string>

#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung {

namespace event_kind {
inline constexpr char kGangReserved[] = "gang_reserved";
inline constexpr char kGangReleased[] = "gang_released";
inline constexpr char kTrialWaiting[] = "trial_waiting";
}  // namespace event_kind

struct GangPoll {
  std::optional<Lease> lease;  // this worker's rank of a gang leased to it (rank, world_size, rendezvous set)
  bool reserved = false;       // the worker holds a rank of a forming gang: wait, take nothing else
  bool formed = false;         // this call leased a gang: the other members' polls should look again
};

class GangLeases {
 public:
  explicit GangLeases(Store& store) : store_(store) {}

  // Releases stale reservations (see above); then the worker's rank of a leased gang not yet handed
  // to it, if any; else whether it holds a reservation (which this poll keeps alive).
  StatusOr<GangPoll> Poll(const std::string& worker_id);

  // Reserves a rank of the first gang trial (by priority, then age) whose rank fits `free_cpus` and
  // `free_gpus`, leasing the gang when this was its last rank; records waiting reasons of trials
  // that cannot fit. NOT_FOUND for an unregistered worker.
  StatusOr<GangPoll> Join(const std::string& worker_id, int64_t free_cpus, int64_t free_gpus);

  // Poll and Join inside the caller's Store::Write transaction, so that a caller can make one look
  // for a lease, or an attempt's ending and the next lease, one commit.
  StatusOr<GangPoll> PollIn(Tables& tables, const std::string& worker_id) const;
  StatusOr<GangPoll> JoinIn(Tables& tables, const std::string& worker_id, int64_t free_cpus, int64_t free_gpus) const;

 private:
  Store& store_;
};

// The trial's resources.world_size (at least 1).
int64_t TrialWorldSize(const TrialRecord& trial);

}  // namespace rung
