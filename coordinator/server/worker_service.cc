// coordinator/server/worker_service.cc
#include "coordinator/server/worker_service.h"

#include "coordinator/server/rpc_support.h"

namespace rung::server {

WorkerServiceImpl::WorkerServiceImpl(InMemoryWorkerRegistry* workers, const ServerOptions& options,
                                     std::chrono::system_clock::time_point started_at)
    : workers_(workers),
      heartbeat_interval_(options.heartbeat_interval),
      lease_duration_(options.lease_duration),
      started_at_(started_at) {}

grpc::Status WorkerServiceImpl::Register(grpc::ServerContext* /*context*/, const v1::RegisterRequest* request,
                                         v1::RegisterResponse* response) {
  StatusOr<v1::Worker> worker = workers_->Register(*request, std::chrono::system_clock::now());
  if (!worker.ok()) return ToGrpcStatus(worker.status());
  response->set_worker_id(worker->worker_id());
  *response->mutable_heartbeat_interval() = ToDuration(heartbeat_interval_);
  *response->mutable_lease_duration() = ToDuration(lease_duration_);
  *response->mutable_server() = MakeServerInfo(started_at_, v1::ROLE_WORKER);
  return grpc::Status::OK;
}

grpc::Status WorkerServiceImpl::Lease(grpc::ServerContext*, const v1::LeaseRequest*, v1::LeaseResponse*) {
  return Unimplemented("rung.v1.WorkerService/Lease");
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext*, const v1::HeartbeatRequest*,
                                          v1::HeartbeatResponse*) {
  return Unimplemented("rung.v1.WorkerService/Heartbeat");
}

grpc::Status WorkerServiceImpl::ReportMetrics(grpc::ServerContext*, const v1::ReportMetricsRequest*,
                                              v1::ReportMetricsResponse*) {
  return Unimplemented("rung.v1.WorkerService/ReportMetrics");
}

grpc::Status WorkerServiceImpl::Complete(grpc::ServerContext*, const v1::CompleteRequest*,
                                         v1::CompleteResponse*) {
  return Unimplemented("rung.v1.WorkerService/Complete");
}

}  // namespace rung::server
