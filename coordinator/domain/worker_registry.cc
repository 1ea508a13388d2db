// coordinator/domain/worker_registry.cc
#include "coordinator/domain/worker_registry.h"

#include "coordinator/domain/transitions.h"
#include "coordinator/store/event_log.h"

namespace rung {
namespace {

// Lifts the worker's quarantine and records why (a worker_released event).
Status LiftQuarantine(Tables& tables, const std::string& worker_id, const domain::Cause& cause) {
  RUNG_RETURN_IF_ERROR(tables.workers().SetQuarantine(worker_id, std::nullopt, ""));
  return tables.events().Append(domain::NewEvent(tables, event_kind::kWorkerReleased, cause));
}

}  // namespace

Status WorkerRegistry::Register(const WorkerInfo& worker) {
  if (worker.id.empty()) return Status::InvalidArgument("a worker needs an id");
  if (worker.cpus < 0 || worker.gpus < 0) {
    return Status::InvalidArgument("worker " + worker.id + ": cpus and gpus must be >= 0");
  }
  bool released = false;
  RUNG_RETURN_IF_ERROR(store_.Write([&](Tables& tables) -> Status {
    RUNG_ASSIGN_OR_RETURN(std::optional<WorkerRecord> before, tables.workers().Find(worker.id));
    RUNG_RETURN_IF_ERROR(tables.workers().Upsert(worker, tables.now()));
    const domain::Cause cause{
        domain::WorkerActor(worker.id),
        "host " + worker.host + ", " + std::to_string(worker.cpus) + " cpus, " + std::to_string(worker.gpus) + " gpus"};
    RUNG_RETURN_IF_ERROR(tables.events().Append(domain::NewEvent(tables, event_kind::kWorkerRegistered, cause)));
    released = before && before->quarantined_at;
    if (!released) return Status::Ok();
    return LiftQuarantine(tables, worker.id,
                          {domain::WorkerActor(worker.id), "worker " + worker.id +
                                                               " registered again (its agent restarted): its "
                                                               "quarantine is lifted"});
  }));
  ChangeSignals::Announce(signals_, /*work_queued=*/released);
  return Status::Ok();
}

StatusOr<WorkerRecord> WorkerRegistry::Release(const std::string& worker_id, const std::string& actor) {
  RUNG_ASSIGN_OR_RETURN(WorkerRecord released, store_.Write([&](Tables& tables) -> StatusOr<WorkerRecord> {
    RUNG_ASSIGN_OR_RETURN(std::optional<WorkerRecord> worker, tables.workers().Find(worker_id));
    if (!worker) return Status::NotFound("no worker " + worker_id + " is registered (`rung workers` lists them)");
    if (!worker->quarantined_at) {
      return Status::FailedPrecondition("worker " + worker_id + " is not quarantined: nothing to release");
    }
    RUNG_RETURN_IF_ERROR(LiftQuarantine(tables, worker_id,
                                        {actor, "worker " + worker_id + " released from quarantine; it leases again"}));
    worker->quarantined_at.reset();
    worker->quarantine_reason.clear();
    RUNG_ASSIGN_OR_RETURN(worker->live_trial_ids, tables.attempts().LiveTrialsOf(worker_id));
    return std::move(*worker);
  }));
  ChangeSignals::Announce(signals_, /*work_queued=*/true);
  return released;
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
