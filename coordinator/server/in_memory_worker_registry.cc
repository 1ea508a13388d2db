// coordinator/server/in_memory_worker_registry.cc
#include "coordinator/server/in_memory_worker_registry.h"

#include "coordinator/server/rpc_support.h"

namespace rung::server {
namespace {

bool IsWorkerId(const std::string& id) {
  if (id.empty()) return false;
  for (char c : id) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status ValidateRegistration(const v1::RegisterRequest& request) {
  if (!IsWorkerId(request.worker_id())) {
    return Status::InvalidArgument("RegisterRequest.worker_id '" + request.worker_id() +
                                   "' is not an id: use letters, digits, '.', '_' and '-', e.g. node7-gpu0");
  }
  if (request.host().empty()) {
    return Status::InvalidArgument("RegisterRequest.host is empty: send the host name other workers reach this one by");
  }
  if (request.cpu_slots() < 0) {
    return Status::InvalidArgument("RegisterRequest.cpu_slots is " + std::to_string(request.cpu_slots()) +
                                   "; it must be 0 or more");
  }
  if (request.cpu_slots() == 0 && request.gpus_size() == 0) {
    return Status::InvalidArgument("worker " + request.worker_id() +
                                   " offers neither CPU slots nor GPUs: nothing could be leased to it");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<v1::Worker> InMemoryWorkerRegistry::Register(const v1::RegisterRequest& request,
                                                      std::chrono::system_clock::time_point now) {
  RUNG_RETURN_IF_ERROR(ValidateRegistration(request));
  std::lock_guard<std::mutex> lock(mutex_);
  v1::Worker& worker = workers_[request.worker_id()];
  if (worker.worker_id().empty()) {
    worker.set_worker_id(request.worker_id());
    *worker.mutable_registered_at() = ToTimestamp(now);
  }
  worker.set_host(request.host());
  worker.set_name(request.name());
  worker.set_cpu_slots(request.cpu_slots());
  *worker.mutable_gpus() = request.gpus();
  *worker.mutable_labels() = request.labels();
  worker.set_build_commit(request.build_commit());
  *worker.mutable_last_seen_at() = ToTimestamp(now);
  return worker;
}

std::optional<v1::Worker> InMemoryWorkerRegistry::Find(const std::string& worker_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = workers_.find(worker_id);
  if (found == workers_.end()) return std::nullopt;
  return found->second;
}

std::vector<v1::Worker> InMemoryWorkerRegistry::List() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<v1::Worker> workers;
  workers.reserve(workers_.size());
  for (const auto& [id, worker] : workers_) workers.push_back(worker);
  return workers;
}

}  // namespace rung::server
