#include "coordinator/store/worker_registry.h"

#include "coordinator/store/event_log.h"
#include "coordinator/store/internal/records.h"
#include "coordinator/store/internal/transitions.h"

namespace rung {
namespace {

// The trials whose live attempt the worker holds, or runs an unfinished rank of (a gang), by id.
Status FillLiveTrials(Database& db, WorkerRecord& worker) {
  StatusOr<Statement> query = db.Prepare(
      "SELECT trial_id FROM attempts WHERE worker_id = ?1 AND state IN ('LEASED', 'RUNNING') UNION "
      "SELECT r.trial_id FROM attempt_ranks r JOIN attempts a ON a.trial_id = r.trial_id AND a.attempt = r.attempt "
      "WHERE r.worker_id = ?1 AND r.ended_at IS NULL AND a.state IN ('LEASED', 'RUNNING') ORDER BY 1");
  if (!query.ok()) return query.status();
  query->Bind(1, worker.info.id);
  StatusOr<std::vector<int64_t>> ids =
      store_internal::ReadRows<int64_t>(*query, [](const Statement& row) { return row.ColumnInt64(0); });
  if (!ids.ok()) return ids.status();
  worker.live_trial_ids = std::move(ids).value();
  return Status::Ok();
}

}  // namespace

Status WorkerRegistry::Register(const WorkerInfo& worker) {
  if (worker.id.empty()) return Status::InvalidArgument("a worker needs an id");
  if (worker.cpus < 0 || worker.gpus < 0) {
    return Status::InvalidArgument("worker " + worker.id + ": cpus and gpus must be >= 0");
  }
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<Statement> upsert = db.Prepare(
        "INSERT INTO workers(id, host, cpus, gpus, registered_at, last_seen_at, details) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6) "
        "ON CONFLICT(id) DO UPDATE SET host = ?2, cpus = ?3, gpus = ?4, last_seen_at = ?5, details = ?6");
    if (!upsert.ok()) return upsert.status();
    upsert->BindAll(worker.id, worker.host, worker.cpus, worker.gpus, ToUnixMicros(now),
                    worker.details.is_object() ? worker.details.dump() : std::string("{}"));
    RUNG_RETURN_IF_ERROR(upsert->Run());
    EventRecord event;
    event.at = now;
    event.kind = event_kind::kWorkerRegistered;
    event.actor = "worker:" + worker.id;
    event.reason = "host " + worker.host + ", " + std::to_string(worker.cpus) + " cpus, " +
                   std::to_string(worker.gpus) + " gpus";
    return store_internal::AppendEvent(db, event);
  });
}

StatusOr<WorkerRecord> WorkerRegistry::Get(const std::string& worker_id) const {
  return store_.Read([&](Database& db) -> StatusOr<WorkerRecord> {
    StatusOr<std::optional<WorkerRecord>> worker = store_internal::SelectOne<WorkerRecord>(db, "WHERE id = ?", worker_id);
    if (!worker.ok()) return worker.status();
    if (!*worker) return Status::NotFound("worker " + worker_id + " is not registered: register it again");
    RUNG_RETURN_IF_ERROR(FillLiveTrials(db, **worker));
    return std::move(**worker);
  });
}

StatusOr<std::vector<WorkerRecord>> WorkerRegistry::List() const {
  return store_.Read([&](Database& db) -> StatusOr<std::vector<WorkerRecord>> {
    StatusOr<std::vector<WorkerRecord>> workers = store_internal::Select<WorkerRecord>(db, "ORDER BY id");
    if (!workers.ok()) return workers.status();
    for (WorkerRecord& worker : *workers) RUNG_RETURN_IF_ERROR(FillLiveTrials(db, worker));
    return workers;
  });
}

}  // namespace rung
