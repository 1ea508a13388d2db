// coordinator/store/tables/gang_table.cc
#include "coordinator/store/tables/gang_table.h"

#include "coordinator/store/database.h"
#include "coordinator/store/internal/records.h"

namespace rung {
namespace {

using store_internal::ReadRows;

constexpr char kRankColumns[] =
    "r.trial_id, r.attempt, r.rank, r.worker_id, r.rendezvous, r.lease_expires_at, r.ended_at IS NOT NULL";

GangRankRow ReadRank(const Statement& row) {
  GangRankRow rank;
  rank.trial_id = row.ColumnInt64(0);
  rank.attempt = row.ColumnInt64(1);
  rank.rank = row.ColumnInt64(2);
  rank.worker_id = row.ColumnText(3);
  rank.rendezvous = row.ColumnText(4);
  rank.lease_expires_at = FromUnixMicros(row.ColumnInt64(5));
  rank.ended = row.ColumnInt64(6) != 0;
  return rank;
}

StatusOr<std::optional<GangRankRow>> FirstRank(Statement& query) {
  RUNG_ASSIGN_OR_RETURN(bool row, query.Step());
  if (!row) return std::optional<GangRankRow>();
  return std::optional<GangRankRow>(ReadRank(query));
}

}  // namespace

StatusOr<std::optional<GangRankRow>> GangTable::RankOf(int64_t trial_id, int64_t attempt,
                                                       const std::string& worker_id) {
  RUNG_ASSIGN_OR_RETURN(Statement query, db_.Prepare(std::string("SELECT ") + kRankColumns +
                                                     " FROM attempt_ranks r WHERE r.trial_id = ? AND r.attempt = ? "
                                                     "AND r.worker_id = ?"));
  query.BindAll(trial_id, attempt, worker_id);
  return FirstRank(query);
}

StatusOr<std::vector<GangRankRow>> GangTable::ExpiredRanks(Timestamp now) {
  RUNG_ASSIGN_OR_RETURN(
      Statement query,
      db_.Prepare(std::string("SELECT ") + kRankColumns +
                  " FROM attempt_ranks r JOIN attempts a ON a.trial_id = r.trial_id AND a.attempt = r.attempt "
                  "WHERE a.state IN ('LEASED', 'RUNNING') AND r.rank > 0 AND r.ended_at IS NULL AND "
                  "r.lease_expires_at <= ? ORDER BY r.trial_id, r.rank"));
  query.Bind(1, ToUnixMicros(now));
  return ReadRows<GangRankRow>(query, &ReadRank);
}

StatusOr<std::optional<GangRankRow>> GangTable::UndeliveredRankOf(const std::string& worker_id) {
  RUNG_ASSIGN_OR_RETURN(
      Statement query,
      db_.Prepare(std::string("SELECT ") + kRankColumns +
                  " FROM attempt_ranks r JOIN attempts a ON a.trial_id = r.trial_id AND a.attempt = r.attempt "
                  "WHERE r.worker_id = ? AND r.delivered_at IS NULL AND a.state IN ('LEASED', 'RUNNING') "
                  "ORDER BY r.trial_id LIMIT 1"));
  query.Bind(1, worker_id);
  return FirstRank(query);
}

Status GangTable::InsertRank(const GangRankRow& rank) {
  return db_.Run(
      "INSERT INTO attempt_ranks(trial_id, attempt, rank, worker_id, rendezvous, lease_expires_at) VALUES (?, ?, "
      "?, ?, ?, ?)",
      rank.trial_id, rank.attempt, rank.rank, rank.worker_id, rank.rendezvous, ToUnixMicros(rank.lease_expires_at));
}

Status GangTable::RenewRank(int64_t trial_id, int64_t attempt, int64_t rank, Timestamp expires) {
  return db_.Run("UPDATE attempt_ranks SET lease_expires_at = ? WHERE trial_id = ? AND attempt = ? AND rank = ?",
                 ToUnixMicros(expires), trial_id, attempt, rank);
}

Status GangTable::EndRank(int64_t trial_id, int64_t attempt, int64_t rank, Timestamp now) {
  return db_.Run(
      "UPDATE attempt_ranks SET ended_at = ? WHERE trial_id = ? AND attempt = ? AND rank = ? AND ended_at IS NULL",
      ToUnixMicros(now), trial_id, attempt, rank);
}

Status GangTable::MarkDelivered(int64_t trial_id, int64_t attempt, int64_t rank, Timestamp now) {
  return db_.Run("UPDATE attempt_ranks SET delivered_at = ? WHERE trial_id = ? AND attempt = ? AND rank = ?",
                 ToUnixMicros(now), trial_id, attempt, rank);
}

StatusOr<bool> GangTable::AnythingFor(const std::string& worker_id) {
  RUNG_ASSIGN_OR_RETURN(int64_t any, db_.QueryInt64("SELECT EXISTS (SELECT 1 FROM gang_reservations) OR "
                                                    "EXISTS (SELECT 1 FROM attempt_ranks WHERE worker_id = ? AND "
                                                    "delivered_at IS NULL)",
                                                    worker_id));
  return any != 0;
}

StatusOr<std::vector<GangReservation>> GangTable::Reservations(int64_t trial_id) {
  RUNG_ASSIGN_OR_RETURN(Statement query, db_.Prepare("SELECT worker_id, reserved_at, polled_at FROM gang_reservations "
                                                     "WHERE trial_id = ? ORDER BY reserved_at, rowid"));
  query.Bind(1, trial_id);
  return ReadRows<GangReservation>(query, [](const Statement& row) {
    return GangReservation{row.ColumnText(0), FromUnixMicros(row.ColumnInt64(1)), FromUnixMicros(row.ColumnInt64(2))};
  });
}

Status GangTable::Reserve(int64_t trial_id, const std::string& worker_id, Timestamp now) {
  return db_.Run("INSERT INTO gang_reservations(trial_id, worker_id, reserved_at, polled_at) VALUES (?, ?, ?, ?)",
                 trial_id, worker_id, ToUnixMicros(now), ToUnixMicros(now));
}

Status GangTable::DropReservations(int64_t trial_id) {
  return db_.Run("DELETE FROM gang_reservations WHERE trial_id = ?", trial_id);
}

StatusOr<bool> GangTable::KeepReservationsAlive(const std::string& worker_id, Timestamp now) {
  RUNG_ASSIGN_OR_RETURN(int64_t kept, db_.Change("UPDATE gang_reservations SET polled_at = ? WHERE worker_id = ?",
                                                 ToUnixMicros(now), worker_id));
  return kept > 0;
}

StatusOr<std::vector<int64_t>> GangTable::ReservedButUnleasable() {
  RUNG_ASSIGN_OR_RETURN(Statement query,
                        db_.Prepare("SELECT DISTINCT g.trial_id FROM gang_reservations g JOIN trials t ON "
                                    "t.id = g.trial_id JOIN sweeps s ON s.id = t.sweep_id WHERE t.state != 'PENDING' "
                                    "OR s.state != 'ACTIVE'"));
  return ReadRows<int64_t>(query, [](const Statement& row) { return row.ColumnInt64(0); });
}

StatusOr<std::vector<LateGang>> GangTable::LateGangs(Timestamp cutoff) {
  RUNG_ASSIGN_OR_RETURN(Statement late,
                        db_.Prepare("SELECT trial_id, MIN(reserved_at), MIN(polled_at) FROM gang_reservations "
                                    "GROUP BY trial_id HAVING MIN(reserved_at) <= ?1 OR MIN(polled_at) <= ?1"));
  const int64_t cutoff_micros = ToUnixMicros(cutoff);
  late.Bind(1, cutoff_micros);
  return ReadRows<LateGang>(late, [&](const Statement& row) {
    return LateGang{row.ColumnInt64(0), row.ColumnInt64(1) <= cutoff_micros};
  });
}

}  // namespace rung
