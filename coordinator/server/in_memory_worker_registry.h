// coordinator/server/in_memory_worker_registry.h
//
// The workers that registered with this coordinator, in memory: the manager behind
// WorkerService.Register and UserService.ListWorkers until the services are wired to the store,
// whose WorkerRegistry (coordinator/store/worker_registry.h) keeps them in the database with the
// same contract (register or update by the worker's own id).
//
// Example:
//   InMemoryWorkerRegistry registry;
//   StatusOr<v1::Worker> worker = registry.Register(request, std::chrono::system_clock::now());
//   if (worker.ok()) Use(worker->worker_id());
//
// Thread safety: every method may be called from any thread (one mutex).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "proto/rung.pb.h"

namespace rung::server {

class InMemoryWorkerRegistry {
 public:
  // Records a worker under request.worker_id, or updates the one registered under it before (its
  // host and resources; it keeps its first registration time).
  // Errors: INVALID_ARGUMENT for an id outside [A-Za-z0-9._-]+, an empty host, negative CPU slots,
  // or neither CPU slots nor GPUs.
  StatusOr<v1::Worker> Register(const v1::RegisterRequest& request, std::chrono::system_clock::time_point now);

  // The worker with this id, or nullopt.
  std::optional<v1::Worker> Find(const std::string& worker_id) const;

  // Every worker, by id.
  std::vector<v1::Worker> List() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, v1::Worker> workers_;
};

}  // namespace rung::server
