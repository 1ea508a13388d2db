// coordinator/server/user_service.h
//
// rung.v1.UserService: what the `rung` command line asks (proto/rung.proto documents every method).
// A thin layer, route_guide style: each method checks its request, asks the coordinator's managers
// (coordinator.h) and translates the answer (proto_convert.h); state lives in the store. After a
// change it wakes whoever waits for one (the managers signal it: coordinator/domain/change_signals.h).
//
// Served: GetServerInfo, SubmitSweep (sweep_submitter.h), ListSweeps, GetSweep, CancelSweep,
// PauseSweep, ResumeSweep, ListTrials, GetTrial (with its attempts), RetryTrials,
// StreamSweepUpdates, GetLogs and StreamMetrics (followers.h), GetMetrics, GetCurves
// (coordinator/domain/sweep_curves.h), GetLearnedParameters, GetDiagnostics,
// ListWorkers, ReleaseWorker, QueryResults (coordinator/domain/results_query.h), Fit and ListFits
// (coordinator/domain/sweep_fits.h), Export (coordinator/domain/sweep_export.h; the TRIALS and
// LADDER tables, UNIMPLEMENTED for the others).
//
// The actor recorded with a change is "user:<name>" from the optional `rung-user` metadata
// ("user:anonymous" without it).
//
// Authorization happens before any of this runs (auth.h): the user token reaches every method, the
// viewer token the queries (auth.h's IsViewerMethod), the worker token GetServerInfo only.
//
// Thread safety: gRPC calls the methods concurrently; the class keeps no mutable state of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "coordinator/server/auth.h"
#include "coordinator/domain/coordinator.h"
#include "coordinator/server/sweep_submitter.h"
#include "proto/rung.grpc.pb.h"

namespace rung::server {

// The trailing metadata key of SubmitSweep's INVALID_ARGUMENT: a serialized v1::SpecDiagnostics.
inline constexpr char kSpecDiagnosticsMetadata[] = "rung-spec-diagnostics-bin";

// What a read-only caller (the viewer token) may cost the coordinator: its fits are computed and
// returned, never stored; one runs at a time; each at most kMaxViewerBootstrap bootstrap replicates.
// Past them: RESOURCE_EXHAUSTED saying which limit.
inline constexpr int kMaxViewerFitsAtOnce = 1;
inline constexpr int kMaxViewerBootstrap = 10'000;

class UserServiceImpl final : public v1::UserService::Service {
 public:
  // `authenticator` tells GetServerInfo the caller's role; SubmitSweep refuses specs of more than
  // `max_trials_per_submission` trials (ServerOptions).
  // REQUIRES: `coordinator` and `authenticator` outlive the service.
  UserServiceImpl(Coordinator* coordinator, const BearerTokenAuthenticator* authenticator,
                  std::chrono::system_clock::time_point started_at, int64_t max_trials_per_submission);

  grpc::Status GetServerInfo(grpc::ServerContext* context, const v1::GetServerInfoRequest* request,
                             v1::ServerInfo* response) override;
  grpc::Status SubmitSweep(grpc::ServerContext* context, const v1::SubmitSweepRequest* request,
                           v1::SubmitSweepResponse* response) override;
  grpc::Status ListSweeps(grpc::ServerContext* context, const v1::ListSweepsRequest* request,
                          v1::ListSweepsResponse* response) override;
  grpc::Status GetSweep(grpc::ServerContext* context, const v1::GetSweepRequest* request, v1::Sweep* response) override;
  grpc::Status CancelSweep(grpc::ServerContext* context, const v1::CancelSweepRequest* request,
                           v1::Sweep* response) override;
  grpc::Status PauseSweep(grpc::ServerContext* context, const v1::PauseSweepRequest* request,
                          v1::Sweep* response) override;
  grpc::Status ResumeSweep(grpc::ServerContext* context, const v1::ResumeSweepRequest* request,
                           v1::Sweep* response) override;
  grpc::Status ListTrials(grpc::ServerContext* context, const v1::ListTrialsRequest* request,
                          v1::ListTrialsResponse* response) override;
  grpc::Status GetTrial(grpc::ServerContext* context, const v1::GetTrialRequest* request, v1::Trial* response) override;
  grpc::Status RetryTrials(grpc::ServerContext* context, const v1::RetryTrialsRequest* request,
                           v1::RetryTrialsResponse* response) override;
  grpc::Status StreamSweepUpdates(grpc::ServerContext* context, const v1::StreamSweepUpdatesRequest* request,
                                  grpc::ServerWriter<v1::SweepUpdate>* writer) override;
  grpc::Status GetMetrics(grpc::ServerContext* context, const v1::GetMetricsRequest* request,
                          v1::GetMetricsResponse* response) override;
  grpc::Status QueryResults(grpc::ServerContext* context, const v1::QueryResultsRequest* request,
                            v1::QueryResultsResponse* response) override;
  grpc::Status GetLearnedParameters(grpc::ServerContext* context,
                                    const v1::GetLearnedParametersRequest* request,
                                    v1::GetLearnedParametersResponse* response) override;
  grpc::Status GetDiagnostics(grpc::ServerContext* context, const v1::GetDiagnosticsRequest* request,
                              v1::GetDiagnosticsResponse* response) override;
  grpc::Status Fit(grpc::ServerContext* context, const v1::FitRequest* request, v1::FitResponse* response) override;
  grpc::Status ListFits(grpc::ServerContext* context, const v1::ListFitsRequest* request,
                        v1::ListFitsResponse* response) override;
  grpc::Status Export(grpc::ServerContext* context, const v1::ExportRequest* request,
                      grpc::ServerWriter<v1::ExportChunk>* writer) override;
  grpc::Status ListWorkers(grpc::ServerContext* context, const v1::ListWorkersRequest* request,
                           v1::ListWorkersResponse* response) override;
  grpc::Status ReleaseWorker(grpc::ServerContext* context, const v1::ReleaseWorkerRequest* request,
                             v1::Worker* response) override;
  grpc::Status GetLogs(grpc::ServerContext* context, const v1::GetLogsRequest* request,
                       grpc::ServerWriter<v1::LogEntry>* writer) override;
  grpc::Status GetTuning(grpc::ServerContext* context, const v1::GetTuningRequest* request,
                         v1::GetTuningResponse* response) override;
  grpc::Status GetPrecision(grpc::ServerContext* context, const v1::GetPrecisionRequest* request,
                            v1::GetPrecisionResponse* response) override;
  grpc::Status GetLaws(grpc::ServerContext* context, const v1::GetLawsRequest* request,
                       v1::GetLawsResponse* response) override;
  grpc::Status GetCurves(grpc::ServerContext* context, const v1::GetCurvesRequest* request,
                         grpc::ServerWriter<v1::Curve>* writer) override;
  grpc::Status StreamMetrics(grpc::ServerContext* context, const v1::StreamMetricsRequest* request,
                             grpc::ServerWriter<v1::MetricArrivals>* writer) override;

 private:
  // GetMetrics' names: INVALID_ARGUMENT for a name that no trial of the trial's sweep reported
  // (listing the names this trial, or else its sweep, reported); OK while the sweep reported nothing.
  Status CheckMetricNames(int64_t trial_id, const std::vector<std::string>& names,
                          const std::vector<std::string>& reported);

  // The sweep as users see it, after a change of it (`status` OK) or the change's error.
  grpc::Status AnswerSweep(const Status& status, int64_t sweep_id, v1::Sweep* response);

  Coordinator* coordinator_;
  const BearerTokenAuthenticator* authenticator_;
  std::chrono::system_clock::time_point started_at_;
  SweepSubmitter submitter_;
  // Fits the viewer token runs now (at most kMaxViewerFitsAtOnce).
  std::atomic<int> viewer_fits_ = 0;
};

}  // namespace rung::server
