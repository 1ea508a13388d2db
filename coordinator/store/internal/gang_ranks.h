// coordinator/store/internal/gang_ranks.h
//
// The attempt_ranks rows of a gang attempt (a data-parallel trial leased to several workers, one
// rank each; gang_leases.h): which worker runs which rank, and each rank's own lease. Rank 0's
// worker holds the attempt row (attempts.worker_id) and its heartbeats renew the attempt's lease;
// the other ranks' heartbeats renew their rank row. A rank > 0 that finished (its trainer exited 0)
// has ended_at set and no longer needs a lease.
//
// Thread safety: as database.h (the caller holds the Store's mutex).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/database.h"
#include "coordinator/store/store_types.h"

namespace rung::store_internal {

struct GangRankRow {
  int64_t trial_id = 0;
  int64_t attempt = 0;
  int64_t rank = 0;
  std::string worker_id;
  std::string rendezvous;
  Timestamp lease_expires_at;
  bool ended = false;
};

// The rank `worker_id` runs in the attempt; nullopt when the attempt is no gang or the worker is no
// member of it.
StatusOr<std::optional<GangRankRow>> GangRankOf(Database& db, int64_t trial_id, int64_t attempt,
                                                const std::string& worker_id);

// The rank's lease expires at `expires`.
Status RenewGangRank(Database& db, int64_t trial_id, int64_t attempt, int64_t rank, Timestamp expires);

// The rank finished (its trainer exited 0): its lease no longer counts.
Status EndGangRank(Database& db, int64_t trial_id, int64_t attempt, int64_t rank, Timestamp now);

// Ranks > 0 of live attempts, not ended, whose lease expired by `now`.
StatusOr<std::vector<GangRankRow>> ExpiredGangRanks(Database& db, Timestamp now);

}  // namespace rung::store_internal
