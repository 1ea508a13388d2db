// coordinator/store/tables/attempt_table.cc
#include "coordinator/store/tables/attempt_table.h"

#include "coordinator/store/database.h"
#include "coordinator/store/internal/records.h"

namespace rung {

using store_internal::Select;

StatusOr<std::optional<AttemptRecord>> AttemptTable::Find(int64_t trial_id, int64_t attempt) {
  return store_internal::SelectOne<AttemptRecord>(db_, "WHERE trial_id = ? AND attempt = ?", trial_id, attempt);
}

StatusOr<AttemptRecord> AttemptTable::Get(int64_t trial_id, int64_t attempt) {
  return store_internal::LoadAttempt(db_, trial_id, attempt);
}

StatusOr<std::vector<AttemptRecord>> AttemptTable::OfTrial(int64_t trial_id) {
  return Select<AttemptRecord>(db_, "WHERE trial_id = ? ORDER BY attempt", trial_id);
}

StatusOr<std::vector<AttemptRecord>> AttemptTable::OfTrialNewestFirst(int64_t trial_id, std::optional<int64_t> up_to) {
  return Select<AttemptRecord>(db_, "WHERE trial_id = ?1 AND (?2 IS NULL OR attempt <= ?2) ORDER BY attempt DESC",
                               trial_id, up_to);
}

StatusOr<std::vector<AttemptRecord>> AttemptTable::ExpiredLive(Timestamp now) {
  return Select<AttemptRecord>(db_, "WHERE state IN ('LEASED', 'RUNNING') AND lease_expires_at <= ? ORDER BY trial_id",
                               ToUnixMicros(now));
}

StatusOr<std::vector<int64_t>> AttemptTable::LiveTrialsOf(const std::string& worker_id) {
  RUNG_ASSIGN_OR_RETURN(
      Statement query,
      db_.Prepare("SELECT trial_id FROM attempts WHERE worker_id = ?1 AND state IN ('LEASED', 'RUNNING') UNION "
                  "SELECT r.trial_id FROM attempt_ranks r JOIN attempts a ON a.trial_id = r.trial_id AND "
                  "a.attempt = r.attempt WHERE r.worker_id = ?1 AND r.ended_at IS NULL AND "
                  "a.state IN ('LEASED', 'RUNNING') ORDER BY 1"));
  query.Bind(1, worker_id);
  return store_internal::ReadRows<int64_t>(query, [](const Statement& row) { return row.ColumnInt64(0); });
}

StatusOr<std::optional<Timestamp>> AttemptTable::EarliestLiveExpiry() {
  RUNG_ASSIGN_OR_RETURN(
      Statement query,
      db_.Prepare("SELECT MIN(t) FROM (SELECT MIN(lease_expires_at) AS t FROM attempts WHERE state IN ('LEASED', "
                  "'RUNNING') UNION ALL SELECT MIN(r.lease_expires_at) FROM attempt_ranks r JOIN attempts a ON "
                  "a.trial_id = r.trial_id AND a.attempt = r.attempt WHERE a.state IN ('LEASED', 'RUNNING') AND "
                  "r.rank > 0 AND r.ended_at IS NULL)"));
  RUNG_RETURN_IF_ERROR(query.Step());
  const std::optional<int64_t> earliest = query.ColumnOptionalInt64(0);
  if (!earliest) return std::optional<Timestamp>();
  return std::optional<Timestamp>(FromUnixMicros(*earliest));
}

StatusOr<bool> AttemptTable::EndedBy(int64_t trial_id, int64_t attempt, TrialState outcome,
                                     const std::string& report_digest) {
  RUNG_ASSIGN_OR_RETURN(Statement query, db_.Prepare("SELECT 1 FROM attempts WHERE trial_id = ? AND attempt = ? AND "
                                                     "state = ? AND report_digest = ?"));
  query.BindAll(trial_id, attempt, TrialStateName(outcome), report_digest);
  return query.Step();
}

Status AttemptTable::Insert(int64_t trial_id, int64_t attempt, const std::string& worker_id, Timestamp leased_at,
                            Timestamp lease_expires_at, const std::string& checkpoint_dir) {
  return db_.Run(
      "INSERT INTO attempts(trial_id, attempt, worker_id, state, leased_at, lease_expires_at, checkpoint_dir) "
      "VALUES (?, ?, ?, 'LEASED', ?, ?, ?)",
      trial_id, attempt, worker_id, ToUnixMicros(leased_at), ToUnixMicros(lease_expires_at), checkpoint_dir);
}

Status AttemptTable::SetRunning(int64_t trial_id, int64_t attempt, Timestamp now, const std::string& provenance_json) {
  return db_.Run(
      "UPDATE attempts SET state = 'RUNNING', started_at = ?, provenance = NULLIF(?, '') WHERE trial_id = ? AND "
      "attempt = ?",
      ToUnixMicros(now), provenance_json, trial_id, attempt);
}

Status AttemptTable::SetBatches(int64_t trial_id, int64_t attempt, int64_t batches) {
  return db_.Run("UPDATE attempts SET batches = ? WHERE trial_id = ? AND attempt = ?", batches, trial_id, attempt);
}

Status AttemptTable::RenewLease(int64_t trial_id, int64_t attempt, Timestamp expires) {
  return db_.Run("UPDATE attempts SET lease_expires_at = ? WHERE trial_id = ? AND attempt = ?", ToUnixMicros(expires),
                 trial_id, attempt);
}

StatusOr<int64_t> AttemptTable::RenewEveryLiveLease(Timestamp expires) {
  RUNG_ASSIGN_OR_RETURN(int64_t renewed,
                        db_.Change("UPDATE attempts SET lease_expires_at = ? WHERE state IN ('LEASED', 'RUNNING')",
                                   ToUnixMicros(expires)));
  RUNG_RETURN_IF_ERROR(
      db_.Change("UPDATE attempt_ranks SET lease_expires_at = ? WHERE ended_at IS NULL AND EXISTS (SELECT 1 FROM "
                 "attempts a WHERE a.trial_id = attempt_ranks.trial_id AND a.attempt = attempt_ranks.attempt AND "
                 "a.state IN ('LEASED', 'RUNNING'))",
                 ToUnixMicros(expires)));
  return renewed;
}

Status AttemptTable::End(int64_t trial_id, int64_t attempt, TrialState outcome, const std::string& reason,
                         const std::string& report_digest, Timestamp now) {
  RUNG_ASSIGN_OR_RETURN(
      int64_t ended, db_.Change("UPDATE attempts SET state = ?, ended_at = ?, exit_reason = ?, "
                                "report_digest = NULLIF(?, '') WHERE trial_id = ? AND attempt = ?",
                                TrialStateName(outcome), ToUnixMicros(now), reason, report_digest, trial_id, attempt));
  if (ended != 1) {
    return Status::Internal("trial " + std::to_string(trial_id) + " has no attempt " + std::to_string(attempt));
  }
  return Status::Ok();
}

}  // namespace rung
