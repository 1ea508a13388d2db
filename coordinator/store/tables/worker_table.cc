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
      "INSERT INTO workers(id, host, cpus, gpus, registered_at, last_seen_at, details) VALUES (?1, ?2, ?3, ?4, ?5, "
      "?5, ?6) ON CONFLICT(id) DO UPDATE SET host = ?2, cpus = ?3, gpus = ?4, last_seen_at = ?5, details = ?6",
      worker.id, worker.host, worker.cpus, worker.gpus, ToUnixMicros(now),
      worker.details.is_object() ? worker.details.dump() : std::string("{}"));
}

StatusOr<bool> WorkerTable::Touch(const std::string& worker_id, Timestamp now) {
  RUNG_ASSIGN_OR_RETURN(int64_t touched,
                        db_.Change("UPDATE workers SET last_seen_at = ? WHERE id = ?", ToUnixMicros(now), worker_id));
  return touched > 0;
}

}  // namespace rung
