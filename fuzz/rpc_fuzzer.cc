// fuzz/rpc_fuzzer.cc
//
// libFuzzer target: the coordinator's RPC request handling. The first input byte picks a request
// message (kMethods below), the rest is parsed as that message (ParseFromArray; an input that does
// not parse is dropped), and the request goes to the real handler of UserServiceImpl or
// WorkerServiceImpl (coordinator/server/user_service.h, worker_service.h), called directly with a
// default-constructed grpc::ServerContext, on a real Coordinator over a SQLite file: no mocks, no
// network. Authorization (auth.h) runs before the handlers in the server and is bypassed here. The
// handlers validate with proto_convert.h (WorkerInfoFromRequest, MetricBatchFromProto,
// AttemptEndingFromRequest, ResultsQueryFromProto, FitOptionsFromProto, ExportTableFromProto, ...).
//
// State. Once per process: a scratch folder (under /dev/shm when there is one: the store fsyncs
// every commit) with a database holding a small sweep of two trials, one SUCCEEDED with metrics and
// a final record, one RUNNING on worker w2 (attempt 1), and workers w1 and w2. Every input runs on
// that state: after an input whose call changed something (a mutating method that answered OK) the
// database is copied back from the snapshot and the coordinator reopened, so a crash reproduces
// from its input alone.
//
// Streams: Export writes to a sink (what UserServiceImpl::Export does, through ExportSweep);
// GetLogs runs without `follow`; StreamSweepUpdates takes its first update only, StreamMetrics its
// first message (subscribed); GetCurves converts its curves as UserServiceImpl::GetCurves does.
// SubmitSweep's spec is expanded only at or under fuzz/spec_cells.h's cap, as in
// sweep_spec_fuzzer.cc.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <memory>
#include <set>
#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/time_util.h>
#include <grpcpp/grpcpp.h>

#include "core/common/artifact_root_marker.h"
#include "coordinator/domain/coordinator.h"
#include "coordinator/domain/sweep_curves.h"
#include "coordinator/domain/sweep_export.h"
#include "coordinator/server/auth.h"
#include "coordinator/server/followers.h"
#include "coordinator/server/proto_convert.h"
#include "coordinator/server/server_options.h"
#include "coordinator/server/user_service.h"
#include "coordinator/server/worker_service.h"
#include "coordinator/store/clock.h"
#include "core/config/yaml_document.h"
#include "core/records/trainer_records.h"
#include "fuzz/spec_cells.h"
#include "proto/protocol_version.h"
#include "proto/rung.grpc.pb.h"
#include "proto/rung.pb.h"
#include "proto/trainer_record_proto.h"
#include "sweeps/spec/sweep_spec.h"

namespace rung::fuzz {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "rpc_fuzzer: %s\n", message.c_str());
  std::abort();
}

// The coordinator and both services over one database file.
class Services {
 public:
  explicit Services(const std::string& database_path)
      : clock_(FromUnixMicros(1'700'000'000'000'000)),
        authenticator_("fuzz-user-token-0123456789abcdef", "fuzz-worker-token-0123456789abcdef") {
    options_.database_path = database_path;
    options_.max_lease_wait = std::chrono::milliseconds(0);  // Lease never long-polls
    StatusOr<std::unique_ptr<Coordinator>> coordinator =
        Coordinator::Open({database_path, "", options_.lease_duration}, clock_);
    if (!coordinator.ok()) Die("cannot open the coordinator: " + coordinator.status().ToString());
    coordinator_ = std::move(coordinator).value();
    const auto started_at = std::chrono::system_clock::from_time_t(1'700'000'000);
    users_ = std::make_unique<server::UserServiceImpl>(coordinator_.get(), &authenticator_, started_at,
                                                       options_.max_trials_per_submission);
    ArtifactRootMarker artifact_root;  // told to workers at Register: a fixed root and id
    artifact_root.root = "/srv/rung/artifacts";
    artifact_root.id = "00000000000000000000000000000000";
    workers_ = std::make_unique<server::WorkerServiceImpl>(coordinator_.get(), options_, started_at, artifact_root);
  }
  ~Services() {
    users_.reset();
    workers_.reset();
    coordinator_->Shutdown();
    coordinator_.reset();
  }

  Coordinator& coordinator() { return *coordinator_; }
  server::UserServiceImpl& users() { return *users_; }
  server::WorkerServiceImpl& workers() { return *workers_; }

 private:
  ManualClock clock_;
  server::BearerTokenAuthenticator authenticator_;
  server::ServerOptions options_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<server::UserServiceImpl> users_;
  std::unique_ptr<server::WorkerServiceImpl> workers_;
};

void Check(const grpc::Status& status, const char* what) {
  if (!status.ok()) Die(std::string("setting up the state: ") + what + ": " + status.error_message());
}

void AddRecordLine(const std::string& line, v1::MetricBatch* batch) {
  if (wire::AddStdoutLine(line, batch) == nullptr) Die("a setup record does not decode: " + line);
}

// The snapshot's content: the calls a user and two workers make (tests/coordinator/server/service_fixture.h).
void Populate(Services& services) {
  grpc::ServerContext context;
  v1::SubmitSweepRequest submit;
  submit.set_spec_file_name("tiny.yaml");
  submit.set_spec_text(
      "name: tiny\nmetric: {name: val_loss, goal: minimize}\nbaseline: {position.variant: rope}\n"
      "data: {source: builtin, seq_len: 16}\nmodel: {mlp: gelu}\ntrain: {batch_size: 2, steps: 10, lr: 1.0e-3}\n"
      "resources: {cpus: 1}\npolicy: {max_retries: 1, max_failed: 4, priority: 0}\n"
      "ladder:\n  rungs:\n    - {layers: 1, d_model: 16, heads: 2}\nsweep:\n  position.variant: [rope, nope]\n");
  v1::SubmitSweepResponse submitted;
  Check(services.users().SubmitSweep(&context, &submit, &submitted), "SubmitSweep");
  for (const char* id : {"w1", "w2"}) {
    v1::RegisterRequest request;
    request.set_worker_id(id);
    request.set_host(std::string("host-") + id);
    request.set_cpu_slots(1);
    request.set_build_commit("abc123");
    request.set_protocol_version(wire::kProtocolVersion);
    (*request.mutable_labels())["rack"] = "a";
    v1::RegisterResponse response;
    Check(services.workers().Register(&context, &request, &response), "Register");
  }
  auto lease = [&](const char* worker) {
    v1::LeaseRequest request;
    request.set_worker_id(worker);
    request.mutable_free()->set_cpu_slots(1);
    v1::LeaseResponse response;
    Check(services.workers().Lease(&context, &request, &response), "Lease");
    if (!response.has_lease()) Die("setting up the state: nothing to lease");
    return response.lease();
  };
  auto report = [&](const char* worker, const v1::TrialLease& leased, int64_t sequence,
                    const std::vector<std::string>& lines) {
    v1::ReportMetricsRequest request;
    request.set_worker_id(worker);
    request.set_trial_id(leased.trial_id());
    request.set_attempt(leased.attempt());
    request.mutable_batch()->set_sequence(sequence);
    for (const std::string& line : lines) AddRecordLine(line, request.mutable_batch());
    request.mutable_batch()->add_stderr_lines("threads: 1");
    v1::ReportMetricsResponse response;
    Check(services.workers().ReportMetrics(&context, &request, &response), "ReportMetrics");
  };
  const std::string provenance = R"({"type":"provenance","commit":"abc123","host":"node7","start_step":0})";
  const v1::TrialLease first = lease("w1");
  report("w1", first, 1,
         {provenance, R"({"type":"step","step":5,"tokens":160,"lr":0.001,"train_loss":2.5,"val_loss":2.6})"});
  report("w1", first, 2,
         {R"({"type":"step","step":10,"tokens":320,"lr":0.001,"train_loss":1.9,"val_loss":1.75})",
          R"({"type":"diagnostics","kind":"attention","step":10,"milestone":"end","layer":0,"head":1,)"
          R"("attention":{"length":2,"layers":[{"heads":[{"effective_length_by_position":[1.0,2.0]}]}]}})",
          R"({"type":"final","step":10,"tokens":320,"val_loss":1.75,"train_loss":1.65,)"
          R"("val_loss_per_position":[2.0,1.5],"positional_parameters":[{"name":"positional.lerope_log_scale",)"
          R"("shape":[2],"values":[0.1,0.2]}],"frequencies":[{"name":"layer_0","shape":[2],"values":[1.0,0.01]}],)"
          R"("train_tokens_per_sec":1234.5})"});
  v1::CompleteRequest complete;
  complete.set_worker_id("w1");
  complete.set_trial_id(first.trial_id());
  complete.set_attempt(first.attempt());
  complete.set_outcome(v1::OUTCOME_SUCCEEDED);
  complete.set_last_batch_sequence(2);
  v1::CompleteResponse completed;
  Check(services.workers().Complete(&context, &complete, &completed), "Complete");
  const v1::TrialLease second = lease("w2");
  report("w2", second, 1, {provenance, R"({"type":"step","step":5,"tokens":160,"lr":0.001,"train_loss":2.7})"});
}

// The scratch folder, the snapshot and the live database; removed at exit.
class Harness {
 public:
  Harness() {
    const char* shm = "/dev/shm";
    std::string base = fs::is_directory(shm) ? shm : fs::temp_directory_path().string();
    std::string pattern = base + "/rung-rpc-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) Die("cannot create a scratch folder under " + base);
    folder_ = pattern;
    live_ = folder_ + "/rung.db";
    snapshot_ = folder_ + "/snapshot.db";
    {
      Services setup(live_);
      Populate(setup);
    }
    fs::copy_file(live_, snapshot_, fs::copy_options::overwrite_existing);
    services_ = std::make_unique<Services>(live_);
  }
  ~Harness() {
    services_.reset();
    std::error_code ignored;
    fs::remove_all(folder_, ignored);
  }

  Services& services() { return *services_; }

  // Back to the snapshot's state.
  void Reset() {
    services_.reset();
    RemoveLive(live_);
    fs::copy_file(snapshot_, live_, fs::copy_options::overwrite_existing);
    services_ = std::make_unique<Services>(live_);
  }

 private:
  static void RemoveLive(const std::string& path) {
    std::error_code ignored;
    fs::remove(path + "-wal", ignored);
    fs::remove(path + "-shm", ignored);
  }

  std::string folder_;
  std::string live_;
  std::string snapshot_;
  std::unique_ptr<Services> services_;
};

// A SubmitSweep whose spec parses to more cells than the cap (see the file comment).
bool SpecTooBig(const v1::SubmitSweepRequest& request) {
  StatusOr<ConfigDocument> document = ParseConfigDocument(request.spec_text(), request.spec_file_name());
  if (!document.ok()) return false;
  SpecDiagnostics diagnostics;
  return CappedCells(ParseSweepSpec(*document, ExpansionLimits{}, &diagnostics)) > kMaxExpandedCells;
}

// Parses `data` as a Request and, when it parses, calls `call` with it.
template <class Request, class Call>
void Run(const uint8_t* data, size_t size, Call&& call) {
  Request request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  call(request);
}

using server::UserServiceImpl;
using server::WorkerServiceImpl;

// One request; true when it may have changed the state (a mutating method answered OK).
bool Dispatch(uint8_t method, const uint8_t* data, size_t size, Services& services) {
  grpc::ServerContext context;
  UserServiceImpl& users = services.users();
  WorkerServiceImpl& workers = services.workers();
  bool mutated = false;
  // Calls `handler` with a request of type Request and a fresh Response; `mutates`: the method
  // changes the state when it answers OK.
  auto unary = [&](auto* request_type, auto* response_type, auto handler, bool mutates) {
    using Request = std::remove_pointer_t<decltype(request_type)>;
    using Response = std::remove_pointer_t<decltype(response_type)>;
    Run<Request>(data, size, [&](const Request& request) {
      Response response;
      const grpc::Status status = handler(&context, &request, &response);
      mutated = mutates && status.ok();
      response.ByteSizeLong();
    });
  };
#define RUNG_USER(Method, Request, Response, mutates)                                                \
  unary(static_cast<v1::Request*>(nullptr), static_cast<v1::Response*>(nullptr),                     \
        [&](grpc::ServerContext* c, const v1::Request* q, v1::Response* r) { return users.Method(c, q, r); }, \
        mutates)
#define RUNG_WORKER(Method, Request, Response, mutates)                                                \
  unary(static_cast<v1::Request*>(nullptr), static_cast<v1::Response*>(nullptr),                       \
        [&](grpc::ServerContext* c, const v1::Request* q, v1::Response* r) { return workers.Method(c, q, r); }, \
        mutates)
  switch (method) {
    case 0: RUNG_WORKER(Register, RegisterRequest, RegisterResponse, true); break;
    case 1: RUNG_WORKER(Lease, LeaseRequest, LeaseResponse, true); break;
    case 2: RUNG_WORKER(Heartbeat, HeartbeatRequest, HeartbeatResponse, true); break;
    case 3: RUNG_WORKER(ReportMetrics, ReportMetricsRequest, ReportMetricsResponse, true); break;
    case 4: RUNG_WORKER(Complete, CompleteRequest, CompleteResponse, true); break;
    case 5:
      Run<v1::SubmitSweepRequest>(data, size, [&](const v1::SubmitSweepRequest& request) {
        if (SpecTooBig(request)) return;
        v1::SubmitSweepResponse response;
        mutated = users.SubmitSweep(&context, &request, &response).ok() && !request.dry_run();
      });
      break;
    case 6: RUNG_USER(QueryResults, QueryResultsRequest, QueryResultsResponse, false); break;
    case 7: RUNG_USER(Fit, FitRequest, FitResponse, true); break;
    case 8:
      Run<v1::ExportRequest>(data, size, [&](const v1::ExportRequest& request) {
        StatusOr<ExportTable> table = server::ExportTableFromProto(request.table());
        if (!table.ok()) return;
        // An error is an answer like any other; only a crash is a finding.
        ExportSweep(services.coordinator(), request.sweep_id(), *table, server::FromProto(request.format()),
                    [](const std::string&) { return true; })
            .IgnoreError();
      });
      break;
    case 9: RUNG_USER(GetMetrics, GetMetricsRequest, GetMetricsResponse, false); break;
    case 10: RUNG_USER(ListSweeps, ListSweepsRequest, ListSweepsResponse, false); break;
    case 11: RUNG_USER(GetSweep, GetSweepRequest, Sweep, false); break;
    case 12: RUNG_USER(CancelSweep, CancelSweepRequest, Sweep, true); break;
    case 13: RUNG_USER(PauseSweep, PauseSweepRequest, Sweep, true); break;
    case 14: RUNG_USER(ResumeSweep, ResumeSweepRequest, Sweep, true); break;
    case 15: RUNG_USER(ListTrials, ListTrialsRequest, ListTrialsResponse, false); break;
    case 16: RUNG_USER(GetTrial, GetTrialRequest, Trial, false); break;
    case 17: RUNG_USER(RetryTrials, RetryTrialsRequest, RetryTrialsResponse, true); break;
    case 18: RUNG_USER(GetLearnedParameters, GetLearnedParametersRequest, GetLearnedParametersResponse, false); break;
    case 19: RUNG_USER(GetDiagnostics, GetDiagnosticsRequest, GetDiagnosticsResponse, false); break;
    case 20: RUNG_USER(ListFits, ListFitsRequest, ListFitsResponse, false); break;
    case 21: RUNG_USER(ListWorkers, ListWorkersRequest, ListWorkersResponse, false); break;
    case 22:
      Run<v1::GetLogsRequest>(data, size, [&](const v1::GetLogsRequest& request) {
        v1::GetLogsRequest once = request;
        once.set_follow(false);
        server::FollowLogs(
            services.coordinator(), once,
            [](const v1::LogEntry& entry) {
              entry.ByteSizeLong();
              return true;
            },
            [] { return true; })
            .IgnoreError();  // as Export's
      });
      break;
    case 23:
      Run<v1::StreamSweepUpdatesRequest>(data, size, [&](const v1::StreamSweepUpdatesRequest& request) {
        server::FollowSweep(
            services.coordinator(), request.sweep_id(), [](const v1::SweepUpdate&) { return false; },
            [] { return true; })
            .IgnoreError();  // as Export's
      });
      break;
    case 24: RUNG_USER(GetServerInfo, GetServerInfoRequest, ServerInfo, false); break;
    case 25:
      RUNG_USER(ReleaseWorker, ReleaseWorkerRequest, Worker, true);
      break;
    case 26:
      Run<v1::GetCurvesRequest>(data, size, [&](const v1::GetCurvesRequest& request) {
        StatusOr<CurvesQuery> query = server::CurvesQueryFromProto(request);
        if (!query.ok()) return;
        // What UserServiceImpl::GetCurves writes, to a sink; an error is an answer like any other.
        StatusOr<std::vector<SweepCurve>> curves = ReadSweepCurves(services.coordinator(), *query);
        if (!curves.ok()) return;
        for (const SweepCurve& curve : *curves) server::ToProtoCurve(curve, query->x_axis).ByteSizeLong();
      });
      break;
    case 27:
      Run<v1::StreamMetricsRequest>(data, size, [&](const v1::StreamMetricsRequest& request) {
        server::FollowMetrics(
            services.coordinator(), request, [](const v1::MetricArrivals&) { return false; }, [] { return true; })
            .IgnoreError();  // as Export's
      });
      break;
    case 28: RUNG_USER(GetTuning, GetTuningRequest, GetTuningResponse, false); break;
    case 29: RUNG_USER(GetPrecision, GetPrecisionRequest, GetPrecisionResponse, false); break;
    case 30: RUNG_USER(GetLaws, GetLawsRequest, GetLawsResponse, false); break;
    default: break;
  }
#undef RUNG_USER
#undef RUNG_WORKER
  return mutated;
}

// The method of each first byte: Dispatch's cases, in order. CheckEveryMethodIsDispatched holds it
// against the services' descriptors at start, so a method added to either service and not here (as
// GetTuning once was) stops the fuzzer and its replay test, naming it.
constexpr const char* kMethodNames[] = {
    "Register",   "Lease",          "Heartbeat", "ReportMetrics",        "Complete",       "SubmitSweep",
    "QueryResults", "Fit",          "Export",    "GetMetrics",           "ListSweeps",     "GetSweep",
    "CancelSweep", "PauseSweep",    "ResumeSweep", "ListTrials",         "GetTrial",       "RetryTrials",
    "GetLearnedParameters", "GetDiagnostics", "ListFits", "ListWorkers", "GetLogs",        "StreamSweepUpdates",
    "GetServerInfo", "ReleaseWorker", "GetCurves", "StreamMetrics",      "GetTuning",      "GetPrecision",
    "GetLaws"};
constexpr uint8_t kMethods = std::size(kMethodNames);

void CheckEveryMethodIsDispatched() {
  std::set<std::string> dispatched(std::begin(kMethodNames), std::end(kMethodNames));
  std::string missing;
  for (const char* service : {v1::WorkerService::service_full_name(), v1::UserService::service_full_name()}) {
    const google::protobuf::ServiceDescriptor* descriptor =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
    if (descriptor == nullptr) Die(std::string("no descriptor of ") + service);
    for (int i = 0; i < descriptor->method_count(); ++i) {
      if (dispatched.erase(descriptor->method(i)->name()) == 0) missing += " " + descriptor->method(i)->full_name();
    }
  }
  if (!missing.empty()) Die("rpc_fuzzer: Dispatch has no case for" + missing + ": add one, and its name to kMethodNames");
  if (!dispatched.empty()) Die("rpc_fuzzer: kMethodNames names " + *dispatched.begin() + ", which no service has");
}

// RUNG_FUZZ_WRITE_SEEDS=<folder>: writes one seed per method (the method byte, then a request like
// those of tests/coordinator/server/service_fixture.h, on the snapshot's ids) and exits; how
// fuzz/corpus/rpc/ was made.
void WriteSeeds(const std::string& folder) {
  fs::create_directories(folder);
  int written = 0;
  auto seed = [&](uint8_t method, const std::string& name, const google::protobuf::Message& request) {
    std::string bytes(1, static_cast<char>(method));
    bytes += request.SerializeAsString();
    std::FILE* file = std::fopen((folder + "/" + name).c_str(), "wb");
    if (file == nullptr) Die("cannot write seeds to " + folder);
    std::fwrite(bytes.data(), 1, bytes.size(), file);
    std::fclose(file);
    ++written;
  };
  v1::RegisterRequest register_request;
  register_request.set_worker_id("w3");
  register_request.set_host("host-w3");
  register_request.set_cpu_slots(2);
  register_request.set_build_commit("abc123");
  register_request.set_protocol_version(wire::kProtocolVersion);
  (*register_request.mutable_labels())["rack"] = "b";
  v1::GpuDevice* gpu = register_request.add_gpus();
  gpu->set_index(0);
  gpu->set_name("NVIDIA H200");
  seed(0, "register", register_request);
  v1::LeaseRequest lease;
  lease.set_worker_id("w1");
  lease.mutable_free()->set_cpu_slots(1);
  lease.mutable_free()->add_gpus(0);
  *lease.mutable_wait() = google::protobuf::util::TimeUtil::MillisecondsToDuration(100);
  seed(1, "lease", lease);
  v1::HeartbeatRequest heartbeat;
  heartbeat.set_worker_id("w2");
  heartbeat.set_trial_id(2);
  heartbeat.set_attempt(1);
  heartbeat.set_step(5);
  seed(2, "heartbeat", heartbeat);
  v1::ReportMetricsRequest report;
  report.set_worker_id("w2");
  report.set_trial_id(2);
  report.set_attempt(1);
  report.mutable_batch()->set_sequence(2);
  AddRecordLine(R"({"type":"step","step":10,"tokens":320,"lr":0.001,"train_loss":1.9,"val_loss":1.8})",
                report.mutable_batch());
  AddRecordLine(R"({"type":"checkpoint","step":10,"path":"ckpt-0000000010.pt","reason":"final"})",
                report.mutable_batch());
  AddRecordLine(R"({"type":"final","step":10,"tokens":320,"val_loss":1.8,"positional_parameters":)"
                R"([{"name":"positional.lerope_log_scale","shape":[2,2],"values":[0.1,0.2,0.3,0.4]}],)"
                R"("extrapolation":[{"multiple":2,"length":32,"method":"yarn","val_loss":2.5}]})",
                report.mutable_batch());
  report.mutable_batch()->add_stderr_lines("threads: 1");
  seed(3, "report_metrics", report);
  v1::CompleteRequest complete;
  complete.set_worker_id("w2");
  complete.set_trial_id(2);
  complete.set_attempt(1);
  complete.set_outcome(v1::OUTCOME_FAILED);
  complete.set_reason("non-finite training loss at step 3");
  complete.set_exit_code(3);
  complete.set_last_batch_sequence(1);
  seed(4, "complete", complete);
  v1::SubmitSweepRequest submit;
  submit.set_spec_file_name("tiny.yaml");
  submit.set_spec_text(
      "name: tiny2\nmetric: {name: val_loss, goal: minimize}\nbaseline: {position.variant: rope}\n"
      "data: {source: builtin, seq_len: 16}\ntrain: {batch_size: 2, steps: 10, lr: 1.0e-3}\n"
      "ladder:\n  rungs:\n    - {layers: 1, d_model: 16, heads: 2}\nsweep:\n  position.variant: [rope, nope]\n"
      "  seed: [0, 1]\n");
  submit.set_dry_run(true);
  seed(5, "submit_sweep", submit);
  v1::QueryResultsRequest query;
  query.set_sweep_id(1);
  query.add_group_by("position.variant");
  query.set_metric("val_loss");
  query.set_summary(v1::METRIC_SUMMARY_BEST);
  v1::ResultFilter* filter = query.add_filters();
  filter->set_key("position.variant");
  filter->mutable_value()->set_text("rope");
  seed(6, "query_results", query);
  v1::FitRequest fit;
  fit.set_sweep_id(1);
  fit.set_bootstrap(10);
  fit.set_seed(1);
  fit.set_fixed_e(1.0);
  fit.add_e_grid(0.5);
  seed(7, "fit", fit);
  v1::ExportRequest export_request;
  export_request.set_sweep_id(1);
  export_request.set_format(v1::EXPORT_FORMAT_JSONL);
  seed(8, "export", export_request);
  v1::GetMetricsRequest metrics;
  metrics.set_trial_id(1);
  metrics.add_names("val_loss");
  metrics.add_names("train_loss");
  metrics.set_max_points(2);
  seed(9, "get_metrics", metrics);
  v1::ListSweepsRequest list_sweeps;
  list_sweeps.set_name("tiny");
  list_sweeps.set_page_size(1);
  seed(10, "list_sweeps", list_sweeps);
  // The requests that name sweep 1 and nothing else.
  auto of_sweep_1 = [&](auto request, uint8_t method, const char* name) {
    request.set_sweep_id(1);
    seed(method, name, request);
  };
  of_sweep_1(v1::GetSweepRequest(), 11, "get_sweep");
  v1::CancelSweepRequest cancel;
  cancel.set_sweep_id(1);
  cancel.set_reason("enough");
  seed(12, "cancel_sweep", cancel);
  of_sweep_1(v1::PauseSweepRequest(), 13, "pause_sweep");
  of_sweep_1(v1::ResumeSweepRequest(), 14, "resume_sweep");
  v1::ListTrialsRequest list_trials;
  list_trials.set_sweep_id(1);
  list_trials.set_view(v1::TRIAL_VIEW_FULL);
  list_trials.set_page_size(1);
  seed(15, "list_trials", list_trials);
  v1::GetTrialRequest get_trial;
  get_trial.set_trial_id(1);
  seed(16, "get_trial", get_trial);
  v1::RetryTrialsRequest retry;
  retry.set_sweep_id(1);
  retry.add_trial_ids(1);
  seed(17, "retry_trials", retry);
  v1::GetLearnedParametersRequest learned;
  learned.set_sweep_id(1);
  learned.set_name_prefix("positional.");
  seed(18, "get_learned_parameters", learned);
  v1::GetDiagnosticsRequest diagnostics;
  diagnostics.set_trial_id(1);
  diagnostics.add_names("attention");
  seed(19, "get_diagnostics", diagnostics);
  v1::ListFitsRequest fits;
  fits.set_sweep_id(1);
  fits.set_with_report(true);
  seed(20, "list_fits", fits);
  v1::ListWorkersRequest workers;
  workers.set_include_gone(true);
  seed(21, "list_workers", workers);
  v1::GetLogsRequest logs;
  logs.set_trial_id(1);
  logs.set_tail(2);
  seed(22, "get_logs", logs);
  of_sweep_1(v1::StreamSweepUpdatesRequest(), 23, "stream_sweep_updates");
  seed(24, "get_server_info", v1::GetServerInfoRequest());
  v1::ReleaseWorkerRequest release;
  release.set_worker_id("w2");
  seed(25, "release_worker", release);
  v1::GetCurvesRequest curves;
  curves.set_sweep_id(1);
  curves.add_names("val_loss");
  curves.add_names("train_loss");
  curves.add_trial_ids(1);
  curves.set_x_axis(v1::CURVE_AXIS_TOKENS);
  curves.set_max_points(4);
  seed(26, "get_curves", curves);
  v1::StreamMetricsRequest stream_metrics;
  stream_metrics.set_sweep_id(1);
  stream_metrics.add_names("val_loss");
  seed(27, "stream_metrics", stream_metrics);
  v1::GetTuningRequest tuning;
  tuning.set_sweep_id(1);
  seed(28, "get_tuning", tuning);
  v1::GetPrecisionRequest precision;
  precision.set_sweep_id(1);
  seed(29, "get_precision", precision);
  v1::GetLawsRequest laws;
  laws.set_sweep_id(1);
  laws.set_bootstrap(20);
  seed(30, "get_laws", laws);
  std::fprintf(stderr, "rpc_fuzzer: %d seeds in %s\n", written, folder.c_str());
}


}  // namespace
}  // namespace rung::fuzz

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Protobuf logs every string field that is not UTF-8 (ParseFromArray then fails, as gRPC's would):
  // thousands of lines a second, for an input that is simply dropped.
  google::protobuf::SetLogHandler(nullptr);
  rung::fuzz::CheckEveryMethodIsDispatched();
  if (const char* folder = std::getenv("RUNG_FUZZ_WRITE_SEEDS"); folder != nullptr) {
    rung::fuzz::WriteSeeds(folder);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static rung::fuzz::Harness* harness = [] {
    static rung::fuzz::Harness instance;
    return &instance;
  }();
  if (size == 0) return 0;
  if (rung::fuzz::Dispatch(data[0] % rung::fuzz::kMethods, data + 1, size - 1, harness->services())) {
    harness->Reset();
  }
  return 0;
}
