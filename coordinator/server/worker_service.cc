// coordinator/server/worker_service.cc
#include "coordinator/server/worker_service.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <google/protobuf/util/time_util.h>

#include "coordinator/server/proto_convert.h"
#include "coordinator/server/rpc_support.h"

namespace rung::server {
namespace {

// A long-poll answers this much before the call's deadline, so that the answer arrives in time.
constexpr std::chrono::milliseconds kDeadlineMargin{200};

// How long a Lease call may wait: the request's wait, capped by the server and the call's deadline.
std::chrono::steady_clock::time_point LeaseDeadline(const grpc::ServerContext& context,
                                                    const v1::LeaseRequest& request,
                                                    std::chrono::milliseconds max_wait) {
  std::chrono::milliseconds wait(google::protobuf::util::TimeUtil::DurationToMilliseconds(request.wait()));
  wait = std::clamp(wait, std::chrono::milliseconds(0), max_wait);
  const auto until_deadline = std::chrono::duration_cast<std::chrono::milliseconds>(
      context.deadline() - std::chrono::system_clock::now() - kDeadlineMargin);
  wait = std::max(std::chrono::milliseconds(0), std::min(wait, until_deadline));
  return std::chrono::steady_clock::now() + wait;
}

// Reports name their worker: the fence checks it holds the attempt (trial_lifecycle.h).
grpc::Status RequireWorkerId(const std::string& worker_id, const char* message) {
  if (!worker_id.empty()) return grpc::Status::OK;
  return {grpc::StatusCode::INVALID_ARGUMENT,
          std::string(message) + ".worker_id is required: the id it registered with"};
}

}  // namespace

WorkerServiceImpl::WorkerServiceImpl(Coordinator* coordinator, const ServerOptions& options,
                                     std::chrono::system_clock::time_point started_at,
                                     ArtifactRootMarker artifact_root)
    : coordinator_(coordinator),
      heartbeat_interval_(options.heartbeat_interval),
      lease_duration_(options.lease_duration),
      max_lease_wait_(options.max_lease_wait),
      started_at_(started_at),
      artifact_root_(std::move(artifact_root)) {}

grpc::Status WorkerServiceImpl::Register(grpc::ServerContext* /*context*/, const v1::RegisterRequest* request,
                                         v1::RegisterResponse* response) {
  if (grpc::Status spoken = CheckProtocolVersion(request->protocol_version(), "rung-worker"); !spoken.ok()) {
    return spoken;
  }
  StatusOr<WorkerInfo> worker = WorkerInfoFromRequest(*request);
  if (!worker.ok()) return ToGrpcStatus(worker.status());
  if (Status registered = coordinator_->workers().Register(*worker); !registered.ok()) return ToGrpcStatus(registered);
  response->set_worker_id(worker->id);
  *response->mutable_heartbeat_interval() = ToDuration(heartbeat_interval_);
  *response->mutable_lease_duration() = ToDuration(lease_duration_);
  *response->mutable_server() = MakeServerInfo(started_at_, v1::ROLE_WORKER);
  response->set_artifact_root(artifact_root_.root);
  response->set_artifact_root_id(artifact_root_.id);
  return grpc::Status::OK;
}

std::string WorkerServiceImpl::QuarantineReason(const std::string& worker_id) const {
  StatusOr<WorkerRecord> worker = coordinator_->workers().Get(worker_id);
  return worker.ok() && worker->quarantined_at ? worker->quarantine_reason : std::string();
}

grpc::Status WorkerServiceImpl::Lease(grpc::ServerContext* context, const v1::LeaseRequest* request,
                                      v1::LeaseResponse* response) {
  if (request->worker_id().empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "LeaseRequest.worker_id is required: the id it registered with"};
  }
  if (request->free().cpu_slots() < 0) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "LeaseRequest.free.cpu_slots must be 0 or more"};
  }
  const LeaseAsk ask{request->worker_id(), request->free().cpu_slots(), request->free().gpus_size()};
  StatusOr<std::optional<rung::Lease>> lease = coordinator_->leases().Acquire(
      ask, LeaseDeadline(*context, *request, max_lease_wait_), [context] { return context->IsCancelled(); });
  if (!lease.ok()) return ToGrpcStatus(lease.status());
  if (*lease) {
    *response->mutable_lease() = ToProtoLease(**lease, request->free().gpus(), lease_duration_);
    return grpc::Status::OK;
  }
  response->set_quarantine_reason(QuarantineReason(request->worker_id()));
  return grpc::Status::OK;
}

grpc::Status WorkerServiceImpl::Heartbeat(grpc::ServerContext* /*context*/, const v1::HeartbeatRequest* request,
                                          v1::HeartbeatResponse* response) {
  if (grpc::Status valid = RequireWorkerId(request->worker_id(), "HeartbeatRequest"); !valid.ok()) return valid;
  StatusOr<HeartbeatReply> reply =
      coordinator_->trials().Heartbeat(request->trial_id(), request->attempt(), request->worker_id());
  if (!reply.ok()) return ToGrpcStatus(reply.status());
  response->set_action(reply->cancel ? v1::HeartbeatResponse::ACTION_CANCEL : v1::HeartbeatResponse::ACTION_CONTINUE);
  if (reply->cancel) response->set_reason(reply->reason.empty() ? "the trial was cancelled" : reply->reason);
  *response->mutable_lease_expires_at() = ToProtoTime(reply->lease_expires_at);
  return grpc::Status::OK;
}

grpc::Status WorkerServiceImpl::ReportMetrics(grpc::ServerContext* /*context*/,
                                              const v1::ReportMetricsRequest* request,
                                              v1::ReportMetricsResponse* response) {
  if (grpc::Status valid = RequireWorkerId(request->worker_id(), "ReportMetricsRequest"); !valid.ok()) return valid;
  StatusOr<MetricBatch> batch = MetricBatchFromProto(request->batch(), "ReportMetricsRequest.batch");
  if (!batch.ok()) return ToGrpcStatus(batch.status());
  batch->worker_id = request->worker_id();
  batch->trial_id = request->trial_id();
  batch->attempt = request->attempt();
  StatusOr<BatchAck> ack = coordinator_->ReportBatch(*batch);
  if (!ack.ok()) return ToGrpcStatus(ack.status());
  response->set_acknowledged_sequence(ack->acknowledged_sequence);
  response->set_duplicate(ack->duplicate);
  return grpc::Status::OK;
}

grpc::Status WorkerServiceImpl::Complete(grpc::ServerContext* /*context*/, const v1::CompleteRequest* request,
                                         v1::CompleteResponse* response) {
  if (grpc::Status valid = RequireWorkerId(request->worker_id(), "CompleteRequest"); !valid.ok()) return valid;
  StatusOr<AttemptEnding> ending = AttemptEndingFromRequest(*request);
  if (!ending.ok()) return ToGrpcStatus(ending.status());
  ending->worker_id = request->worker_id();
  StatusOr<EndingAck> ended = coordinator_->EndAttempt(request->trial_id(), request->attempt(), *ending);
  if (!ended.ok()) return ToGrpcStatus(ended.status());
  response->set_trial_state(ToProto(ended->trial_state));
  response->set_duplicate(ended->duplicate);
  if (request->outcome() == v1::OUTCOME_FAILED) response->set_quarantine_reason(QuarantineReason(request->worker_id()));
  return grpc::Status::OK;
}

}  // namespace rung::server
