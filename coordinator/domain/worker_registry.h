// coordinator/domain/worker_registry.h
//
// The workers table: every worker that registered, its host and resources, when it was last
// heard from (registration, leases and heartbeats update it) and whether it is quarantined. A worker must be registered
// before it can lease a trial; attempts name the worker that ran them.
//
// Example:
//   WorkerRegistry workers(store);
//   RUNG_RETURN_IF_ERROR(workers.Register({"node7-gpu0", "node7", 16, 1}));
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <string>
#include <vector>

#include "coordinator/domain/change_signals.h"
#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung {

class WorkerRegistry {
 public:
  // `signals` (may be null) must outlive the registry; a registration signals Changed.
  explicit WorkerRegistry(Store& store, ChangeSignals* signals = nullptr) : store_(store), signals_(signals) {}

  // Registers a worker, or updates the host and resources of one registered before (a restarted
  // worker keeps its id and its first registration time). Records a worker_registered event. An
  // agent registers when it starts, so a registration also lifts the worker's quarantine
  // (worker_quarantine.h; a worker_released event). INVALID_ARGUMENT for an empty id or negative
  // resources.
  Status Register(const WorkerInfo& worker);

  // Lifts a worker's quarantine on a user's word (`actor`), so that it leases again; records a
  // worker_released event and wakes waiting leases. NOT_FOUND for an unknown worker,
  // FAILED_PRECONDITION for one not quarantined (nothing is changed).
  StatusOr<WorkerRecord> Release(const std::string& worker_id, const std::string& actor);

  // NOT_FOUND for an unknown id. Records come with the trials the worker holds live leases of.
  StatusOr<WorkerRecord> Get(const std::string& worker_id) const;
  StatusOr<std::vector<WorkerRecord>> List() const;  // by id

 private:
  Store& store_;
  ChangeSignals* const signals_;
};

}  // namespace rung
