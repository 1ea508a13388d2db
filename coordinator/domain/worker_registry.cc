// coordinator/domain/worker_registry.cc
#include "coordinator/domain/worker_registry.h"

#include "coordinator/domain/transitions.h"
#include "coordinator/store/event_log.h"

namespace rung {

Status WorkerRegistry::Register(const WorkerInfo& worker) {
  if (worker.id.empty()) return Status::InvalidArgument("a worker needs an id");
  if (worker.cpus < 0 || worker.gpus < 0) {
    return Status::InvalidArgument("worker " + worker.id + ": cpus and gpus must be >= 0");
  }
  RUNG_RETURN_IF_ERROR(store_.Write([&](Tables& tables) -> Status {
    RUNG_RETURN_IF_ERROR(tables.workers().Upsert(worker, tables.now()));
    return tables.events().Append(domain::NewEvent(tables, event_kind::kWorkerRegistered,
                                                   {domain::WorkerActor(worker.id),
                                                    "host " + worker.host + ", " + std::to_string(worker.cpus) +
                                                        " cpus, " + std::to_string(worker.gpus) + " gpus"}));
  }));
  ChangeSignals::Announce(signals_, /*work_queued=*/false);
  return Status::Ok();
}

StatusOr<WorkerRecord> WorkerRegistry::Get(const std::string& worker_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<WorkerRecord> {
    RUNG_ASSIGN_OR_RETURN(std::optional<WorkerRecord> worker, tables.workers().Find(worker_id));
    if (!worker) return Status::NotFound("worker " + worker_id + " is not registered: register it again");
    RUNG_ASSIGN_OR_RETURN(worker->live_trial_ids, tables.attempts().LiveTrialsOf(worker_id));
    return std::move(*worker);
  });
}

StatusOr<std::vector<WorkerRecord>> WorkerRegistry::List() const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<WorkerRecord>> {
    RUNG_ASSIGN_OR_RETURN(std::vector<WorkerRecord> workers, tables.workers().List());
    for (WorkerRecord& worker : workers) {
      RUNG_ASSIGN_OR_RETURN(worker.live_trial_ids, tables.attempts().LiveTrialsOf(worker.info.id));
    }
    return workers;
  });
}

}  // namespace rung
