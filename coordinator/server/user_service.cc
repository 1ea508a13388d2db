// coordinator/server/user_service.cc
#include "coordinator/server/user_service.h"

#include "coordinator/server/rpc_support.h"

namespace rung::server {

UserServiceImpl::UserServiceImpl(const InMemoryWorkerRegistry* workers, const BearerTokenAuthenticator* authenticator,
                                 std::chrono::system_clock::time_point started_at)
    : workers_(workers), authenticator_(authenticator), started_at_(started_at) {}

grpc::Status UserServiceImpl::GetServerInfo(grpc::ServerContext* context, const v1::GetServerInfoRequest* /*request*/,
                                            v1::ServerInfo* response) {
  *response = MakeServerInfo(started_at_, authenticator_->CallerRole(*context));
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::ListWorkers(grpc::ServerContext* /*context*/, const v1::ListWorkersRequest* /*request*/,
                                          v1::ListWorkersResponse* response) {
  for (v1::Worker& worker : workers_->List()) *response->add_workers() = std::move(worker);
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::SubmitSweep(grpc::ServerContext*, const v1::SubmitSweepRequest*,
                                          v1::SubmitSweepResponse*) {
  return Unimplemented("rung.v1.UserService/SubmitSweep");
}

grpc::Status UserServiceImpl::ListSweeps(grpc::ServerContext*, const v1::ListSweepsRequest*,
                                         v1::ListSweepsResponse*) {
  return Unimplemented("rung.v1.UserService/ListSweeps");
}

grpc::Status UserServiceImpl::GetSweep(grpc::ServerContext*, const v1::GetSweepRequest*, v1::Sweep*) {
  return Unimplemented("rung.v1.UserService/GetSweep");
}

grpc::Status UserServiceImpl::CancelSweep(grpc::ServerContext*, const v1::CancelSweepRequest*, v1::Sweep*) {
  return Unimplemented("rung.v1.UserService/CancelSweep");
}

grpc::Status UserServiceImpl::PauseSweep(grpc::ServerContext*, const v1::PauseSweepRequest*, v1::Sweep*) {
  return Unimplemented("rung.v1.UserService/PauseSweep");
}

grpc::Status UserServiceImpl::ResumeSweep(grpc::ServerContext*, const v1::ResumeSweepRequest*, v1::Sweep*) {
  return Unimplemented("rung.v1.UserService/ResumeSweep");
}

grpc::Status UserServiceImpl::ListTrials(grpc::ServerContext*, const v1::ListTrialsRequest*,
                                         v1::ListTrialsResponse*) {
  return Unimplemented("rung.v1.UserService/ListTrials");
}

grpc::Status UserServiceImpl::GetTrial(grpc::ServerContext*, const v1::GetTrialRequest*, v1::Trial*) {
  return Unimplemented("rung.v1.UserService/GetTrial");
}

grpc::Status UserServiceImpl::RetryTrials(grpc::ServerContext*, const v1::RetryTrialsRequest*,
                                          v1::RetryTrialsResponse*) {
  return Unimplemented("rung.v1.UserService/RetryTrials");
}

grpc::Status UserServiceImpl::StreamSweepUpdates(grpc::ServerContext*, const v1::StreamSweepUpdatesRequest*,
                                                 grpc::ServerWriter<v1::SweepUpdate>*) {
  return Unimplemented("rung.v1.UserService/StreamSweepUpdates");
}

grpc::Status UserServiceImpl::GetMetrics(grpc::ServerContext*, const v1::GetMetricsRequest*,
                                         v1::GetMetricsResponse*) {
  return Unimplemented("rung.v1.UserService/GetMetrics");
}

grpc::Status UserServiceImpl::QueryResults(grpc::ServerContext*, const v1::QueryResultsRequest*,
                                           v1::QueryResultsResponse*) {
  return Unimplemented("rung.v1.UserService/QueryResults");
}

grpc::Status UserServiceImpl::GetLearnedParameters(grpc::ServerContext*,
                                                   const v1::GetLearnedParametersRequest*,
                                                   v1::GetLearnedParametersResponse*) {
  return Unimplemented("rung.v1.UserService/GetLearnedParameters");
}

grpc::Status UserServiceImpl::Fit(grpc::ServerContext*, const v1::FitRequest*, v1::FitResponse*) {
  return Unimplemented("rung.v1.UserService/Fit");
}

grpc::Status UserServiceImpl::Export(grpc::ServerContext*, const v1::ExportRequest*,
                                     grpc::ServerWriter<v1::ExportChunk>*) {
  return Unimplemented("rung.v1.UserService/Export");
}

grpc::Status UserServiceImpl::GetLogs(grpc::ServerContext*, const v1::GetLogsRequest*,
                                      grpc::ServerWriter<v1::LogEntry>*) {
  return Unimplemented("rung.v1.UserService/GetLogs");
}

}  // namespace rung::server
