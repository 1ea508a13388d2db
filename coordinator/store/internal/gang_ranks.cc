#include "coordinator/store/internal/gang_ranks.h"

namespace rung::store_internal {
namespace {

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

}  // namespace

StatusOr<std::optional<GangRankRow>> GangRankOf(Database& db, int64_t trial_id, int64_t attempt,
                                                const std::string& worker_id) {
  StatusOr<Statement> query = db.Prepare(std::string("SELECT ") + kRankColumns +
                                         " FROM attempt_ranks r WHERE r.trial_id = ? AND r.attempt = ? AND "
                                         "r.worker_id = ?");
  if (!query.ok()) return query.status();
  query->BindAll(trial_id, attempt, worker_id);
  StatusOr<bool> row = query->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<GangRankRow>();
  return std::optional<GangRankRow>(ReadRank(*query));
}

Status RenewGangRank(Database& db, int64_t trial_id, int64_t attempt, int64_t rank, Timestamp expires) {
  StatusOr<Statement> update =
      db.Prepare("UPDATE attempt_ranks SET lease_expires_at = ? WHERE trial_id = ? AND attempt = ? AND rank = ?");
  if (!update.ok()) return update.status();
  update->BindAll(ToUnixMicros(expires), trial_id, attempt, rank);
  return update->Run();
}

Status EndGangRank(Database& db, int64_t trial_id, int64_t attempt, int64_t rank, Timestamp now) {
  StatusOr<Statement> update = db.Prepare(
      "UPDATE attempt_ranks SET ended_at = ? WHERE trial_id = ? AND attempt = ? AND rank = ? AND ended_at IS NULL");
  if (!update.ok()) return update.status();
  update->BindAll(ToUnixMicros(now), trial_id, attempt, rank);
  return update->Run();
}

StatusOr<std::vector<GangRankRow>> ExpiredGangRanks(Database& db, Timestamp now) {
  StatusOr<Statement> query = db.Prepare(
      std::string("SELECT ") + kRankColumns +
      " FROM attempt_ranks r JOIN attempts a ON a.trial_id = r.trial_id AND a.attempt = r.attempt "
      "WHERE a.state IN ('LEASED', 'RUNNING') AND r.rank > 0 AND r.ended_at IS NULL AND r.lease_expires_at <= ? "
      "ORDER BY r.trial_id, r.rank");
  if (!query.ok()) return query.status();
  query->Bind(1, ToUnixMicros(now));
  std::vector<GangRankRow> ranks;
  for (;;) {
    StatusOr<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (!*row) return ranks;
    ranks.push_back(ReadRank(*query));
  }
}

}  // namespace rung::store_internal
