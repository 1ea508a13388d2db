// coordinator/server/worker_service.h
//
// rung.v1.WorkerService: what `rung-worker` agents say (proto/rung.proto documents every method).
// A thin layer over the managers, like UserServiceImpl. Served so far: Register (into the
// InMemoryWorkerRegistry). Lease, Heartbeat, ReportMetrics and Complete answer UNIMPLEMENTED until
// the store and the scheduler are wired in.
//
// Authorization happens before any of this runs (auth.h): only the worker token reaches these
// methods.
//
// Thread safety: gRPC calls the methods concurrently; the registry is thread-safe.
#pragma once

#include <chrono>

#include <grpcpp/grpcpp.h>

#include "coordinator/server/server_options.h"
#include "coordinator/server/in_memory_worker_registry.h"
#include "proto/rung.grpc.pb.h"

namespace rung::server {

class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  // `options` gives the heartbeat interval and lease duration told to workers.
  // REQUIRES: `workers` outlives the service.
  WorkerServiceImpl(InMemoryWorkerRegistry* workers, const ServerOptions& options,
                    std::chrono::system_clock::time_point started_at);

  grpc::Status Register(grpc::ServerContext* context, const v1::RegisterRequest* request,
                        v1::RegisterResponse* response) override;
  grpc::Status Lease(grpc::ServerContext* context, const v1::LeaseRequest* request,
                     v1::LeaseResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                         v1::HeartbeatResponse* response) override;
  grpc::Status ReportMetrics(grpc::ServerContext* context, const v1::ReportMetricsRequest* request,
                             v1::ReportMetricsResponse* response) override;
  grpc::Status Complete(grpc::ServerContext* context, const v1::CompleteRequest* request,
                        v1::CompleteResponse* response) override;

 private:
  InMemoryWorkerRegistry* workers_;
  std::chrono::milliseconds heartbeat_interval_;
  std::chrono::milliseconds lease_duration_;
  std::chrono::system_clock::time_point started_at_;
};

}  // namespace rung::server
