// coordinator/store/tables/gang_table.h
//
// The two tables of gangs (data-parallel trials leased to several workers; coordinator/domain/
// gang_leases.h): attempt_ranks (which worker runs which rank of an attempt, each rank's own lease,
// whether it was handed out and whether it finished) and gang_reservations (workers that reserved
// a rank of a forming gang). Typed reads and writes, no rules.
//
// Thread safety: as database.h (used inside a Store transaction only; tables.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/store/clock.h"
#include "core/common/status.h"

namespace rung {

class Database;

struct GangRankRow {
  int64_t trial_id = 0;
  int64_t attempt = 0;
  int64_t rank = 0;
  std::string worker_id;
  std::string rendezvous;
  Timestamp lease_expires_at;
  bool ended = false;
};

struct GangReservation {
  std::string worker_id;
  Timestamp reserved_at;
  Timestamp polled_at;
};

// A forming gang due for release: its trial, and whether formation timed out (else a reserving
// worker stopped polling).
struct LateGang {
  int64_t trial_id = 0;
  bool formation_timed_out = false;
};

class GangTable {
 public:
  explicit GangTable(Database& db) : db_(db) {}

  // ---------------------------------------------------------------------------------------- ranks

  // The rank `worker_id` runs in the attempt; nullopt when the attempt is no gang or the worker no member.
  StatusOr<std::optional<GangRankRow>> RankOf(int64_t trial_id, int64_t attempt, const std::string& worker_id);
  // Ranks > 0 of live attempts, not ended, whose lease expired by `now`, by trial and rank.
  StatusOr<std::vector<GangRankRow>> ExpiredRanks(Timestamp now);
  // The first rank of a live attempt run by `worker_id` not yet handed to it.
  StatusOr<std::optional<GangRankRow>> UndeliveredRankOf(const std::string& worker_id);
  Status InsertRank(const GangRankRow& rank);
  Status RenewRank(int64_t trial_id, int64_t attempt, int64_t rank, Timestamp expires);
  // The rank finished (its trainer exited 0): its lease no longer counts.
  Status EndRank(int64_t trial_id, int64_t attempt, int64_t rank, Timestamp now);
  Status MarkDelivered(int64_t trial_id, int64_t attempt, int64_t rank, Timestamp now);

  // --------------------------------------------------------------------------------- reservations

  // Whether any gang is forming, or a rank waits to be handed to `worker_id`: one probe.
  StatusOr<bool> AnythingFor(const std::string& worker_id);
  // The trial's reservations, oldest first.
  StatusOr<std::vector<GangReservation>> Reservations(int64_t trial_id);
  Status Reserve(int64_t trial_id, const std::string& worker_id, Timestamp now);
  Status DropReservations(int64_t trial_id);
  // The reservations of `worker_id` were polled at `now`; false when it holds none.
  StatusOr<bool> KeepReservationsAlive(const std::string& worker_id, Timestamp now);
  // Trials with reservations that are no longer PENDING in an ACTIVE sweep.
  StatusOr<std::vector<int64_t>> ReservedButUnleasable();
  // Gangs whose first reservation, or whose least recent poll, is at or before `cutoff`.
  StatusOr<std::vector<LateGang>> LateGangs(Timestamp cutoff);

 private:
  Database& db_;
};

}  // namespace rung
