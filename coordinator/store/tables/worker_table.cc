// coordinator/store/tables/worker_table.cc
#include "coordinator/store/tables/worker_table.h"

#include "coordinator/store/database.h"
#include "coordinator/store/internal/records.h"

namespace rung {

StatusOr<std::optional<WorkerRecord>> WorkerTable::Find(const std::string& worker_id) {
  return store_internal::SelectOne<WorkerRecord>(db_, "WHERE id = ?", worker_id);
}

StatusOr<std::vector<WorkerRecord>> WorkerTable::List() {
  return store_internal::Select<WorkerRecord>(db_, "ORDER BY id");
}

Status WorkerTable::Upsert(const WorkerInfo& worker, Timestamp now) {
  return db_.Run(
      "INSERT INTO workers(id, host, cpus, gpus, registered_at, last_seen_at, details, stops_at) VALUES (?1, ?2, ?3, "
      "?4, ?5, ?5, ?6, ?7) ON CONFLICT(id) DO UPDATE SET host = ?2, cpus = ?3, gpus = ?4, last_seen_at = ?5, "
      "details = ?6, stops_at = ?7",
      worker.id, worker.host, worker.cpus, worker.gpus, ToUnixMicros(now),
      worker.details.is_object() ? worker.details.dump() : std::string("{}"),
      worker.stops_at ? std::optional<int64_t>(ToUnixMicros(*worker.stops_at)) : std::nullopt);
}

StatusOr<bool> WorkerTable::Touch(const std::string& worker_id, Timestamp now) {
  RUNG_ASSIGN_OR_RETURN(int64_t touched,
                        db_.Change("UPDATE workers SET last_seen_at = ? WHERE id = ?", ToUnixMicros(now), worker_id));
  return touched > 0;
}

Status WorkerTable::SetQuarantine(const std::string& worker_id, std::optional<Timestamp> at,
                                  const std::string& reason) {
  if (!at) return db_.Run("UPDATE workers SET quarantined_at = NULL, quarantine_reason = '' WHERE id = ?", worker_id);
  return db_.Run("UPDATE workers SET quarantined_at = ?, quarantine_reason = ? WHERE id = ?", ToUnixMicros(*at), reason,
                 worker_id);
}

StatusOr<int64_t> WorkerTable::InsertEnding(const WorkerEnding& ending) {
  RUNG_RETURN_IF_ERROR(db_.Run(
      "INSERT INTO worker_endings(worker_id, trial_id, attempt, ended_at, outcome, exit_code, worker_fault, refunded) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ending.worker_id, ending.trial_id, ending.attempt, ToUnixMicros(ending.ended_at), TrialStateName(ending.outcome),
      static_cast<int64_t>(ending.exit_code), static_cast<int64_t>(ending.worker_fault),
      static_cast<int64_t>(ending.refunded)));
  return db_.LastInsertRowId();
}

StatusOr<std::vector<WorkerEnding>> WorkerTable::RecentEndings(const std::string& worker_id, int64_t limit) {
  return store_internal::Select<WorkerEnding>(db_, "WHERE worker_id = ? ORDER BY id DESC LIMIT ?", worker_id, limit);
}

Status WorkerTable::MarkRefunded(int64_t ending_id) {
  return db_.Run("UPDATE worker_endings SET refunded = 1 WHERE id = ?", ending_id);
}

}  // namespace rung
