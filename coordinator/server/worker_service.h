// coordinator/server/worker_service.h
//
// rung.v1.WorkerService: what `rung-worker` agents say (proto/rung.proto documents every method).
// A thin layer over the coordinator's managers (coordinator.h), like UserServiceImpl:
//   Register       WorkerRegistry::Register (the worker's details kept for ListWorkers); answers the
//                  heartbeat interval, the lease duration, and the artifact root with its marker's id
//                  (core/common/artifact_root_marker.h), which the worker checks it sees
//   Lease          LeaseBroker: long-poll up to the request's wait, the server's maximum and the
//                  call's deadline, whichever is first; the lease carries the resolved config, this
//                  attempt's checkpoint folder, the earlier attempts' folders to resume from, and
//                  the GPUs it takes (the first of the worker's free ones)
//   Heartbeat      due leases expire first; then TrialLifecycle::Heartbeat (CANCEL for a cancelled
//                  trial)
//   ReportMetrics  TrialLifecycle::ReportBatch, fenced by attempt, idempotent by sequence, the
//                  typed trainer records stored (record_rows.h); acknowledged after commit
//   Complete       Coordinator::EndAttempt (TrialLifecycle::EndAttempt), fenced; an identical repeat
//                  is acknowledged. The ending alone: the attempt's batches came by ReportMetrics,
//                  and the worker's next trial comes by Lease
// Heartbeat, ReportMetrics and Complete require their worker_id and are refused unless that worker
// holds the attempt. Store errors keep their codes (rpc_support.h): FAILED_PRECONDITION for a fenced
// attempt (naming both attempts) or another worker's attempt (naming its holder), NOT_FOUND,
// OUT_OF_RANGE, INVALID_ARGUMENT.
//
// Authorization happens before any of this runs (auth.h): only the worker token reaches these
// methods.
//
// Thread safety: gRPC calls the methods concurrently; the class keeps no mutable state of its own.
#pragma once

#include <chrono>

#include <grpcpp/grpcpp.h>

#include "coordinator/domain/coordinator.h"
#include "coordinator/server/server_options.h"
#include "core/common/artifact_root_marker.h"
#include "proto/rung.grpc.pb.h"

namespace rung::server {


class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  // `options` gives the heartbeat interval and lease duration told to workers, and the longest a
  // Lease call waits; `artifact_root` is the root and the marker id told to workers.
  // REQUIRES: `coordinator` outlives the service.
  WorkerServiceImpl(Coordinator* coordinator, const ServerOptions& options,
                    std::chrono::system_clock::time_point started_at, ArtifactRootMarker artifact_root);

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
  // The worker's quarantine reason ("" when it is not quarantined or cannot be read: an answer's
  // extra, never its error).
  std::string QuarantineReason(const std::string& worker_id) const;

  Coordinator* coordinator_;
  std::chrono::microseconds heartbeat_interval_;
  std::chrono::microseconds lease_duration_;
  std::chrono::milliseconds max_lease_wait_;
  std::chrono::system_clock::time_point started_at_;
  ArtifactRootMarker artifact_root_;
};

}  // namespace rung::server
