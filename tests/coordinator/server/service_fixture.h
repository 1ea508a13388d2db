// tests/coordinator/server/service_fixture.h
//
// The fixture of the tests that drive the coordinator's services end to end: a real server on
// 127.0.0.1 port 0 over a real database file in a scratch folder, real gRPC stubs with both tokens,
// a ManualClock for leases (nothing sleeps to a result), and the calls a worker and a user make,
// including rung-train's records as a worker relays them.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/util/time_util.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "coordinator/server/grpc_server.h"
#include "coordinator/store/clock.h"
#include "core/records/trainer_records.h"
#include "proto/protocol_version.h"
#include "proto/rung.grpc.pb.h"
#include "proto/trainer_record_proto.h"
#include "tests/coordinator/server/server_test_util.h"

namespace rung::server::testing {

inline constexpr std::chrono::seconds kLease(60);

// Two trials (rope, nope) on one rung; `priority` and `lr` vary per test.
inline std::string TinySpec(const std::string& name, int priority = 0, const std::string& lr = "1.0e-3",
                     const std::string& variants = "[rope, nope]") {
  return "name: " + name +
         "\n"
         "metric: {name: val_loss, goal: minimize}\n"
         "baseline: {position.variant: rope}\n"
         "data: {source: builtin, seq_len: 16}\n"
         "model: {mlp: gelu}\n"
         "train: {batch_size: 2, steps: 10, lr: " +
         lr +
         "}\n"
         "resources: {cpus: 1}\n"
         "policy: {max_retries: 1, max_failed: 4, priority: " +
         std::to_string(priority) +
         "}\n"
         "ladder:\n"
         "  rungs:\n"
         "    - {layers: 1, d_model: 16, heads: 2}\n"
         "sweep:\n"
         "  position.variant: " +
         variants + "\n";
}

// rung-train's records, as a worker relays them.
inline std::string ProvenanceRecord() { return R"({"type":"provenance","commit":"abc123","host":"node7","start_step":0})"; }

inline std::string StepRecord(int64_t step, double train_loss, std::optional<double> val_loss = std::nullopt) {
  nlohmann::json record = {{"type", "step"},         {"step", step},
                           {"tokens", step * 32},    {"flops", 6.0 * 3072 * static_cast<double>(step * 32)},
                           {"lr", 0.001},            {"train_loss", train_loss},
                           {"grad_norm", 0.5},       {"tokens_per_sec", 1000.0},
                           {"elapsed_sec", 0.01 * static_cast<double>(step)}};
  if (val_loss) record["val_loss"] = *val_loss;
  return record.dump();
}

inline std::string FinalRecord(double val_loss) {
  nlohmann::json record = {
      {"type", "final"},
      {"step", 10},
      {"tokens", 320},
      {"val_loss", val_loss},
      {"train_loss", val_loss - 0.1},
      {"val_loss_per_position", {2.0, 1.5, 1.2}},
      {"positional_parameters", {{{"name", "positional.lerope_log_scale"}, {"shape", {2, 2}}, {"values", {0.1, 0.2, 0.3, 0.4}}}}},
      {"frequencies", {{{"name", "layer_0"}, {"shape", {2}}, {"values", {1.0, 0.01}}}}},
      {"train_tokens_per_sec", 1234.5}};
  return record.dump();
}

// Sets `batch` to what a worker relays of these stdout lines: each record typed, any other line as
// log text.
inline void FillBatch(int64_t sequence, const std::vector<std::string>& lines, v1::MetricBatch* batch) {
  batch->set_sequence(sequence);
  for (const std::string& line : lines) wire::AddStdoutLine(line, batch);
}

class CoordinatorServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(LoopbackServerOptions(scratch_, &options_, &user_token_, &worker_token_));
    options_.lease_duration = kLease;
    StartServer();
  }

  void StartServer() {
    StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_, &clock_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    auto channel = LoopbackChannel(server_->address());
    users_ = v1::UserService::NewStub(channel);
    workers_ = v1::WorkerService::NewStub(channel);
  }

  // Stops the coordinator (the database closes) and starts a new one on the same file.
  void RestartServer() {
    users_.reset();
    workers_.reset();
    server_.reset();
    StartServer();
  }

  grpc::Status TrySubmit(const std::string& spec, const std::string& file, v1::SubmitSweepResponse* response,
                         bool dry_run = false, grpc::ClientContext* context = nullptr) {
    v1::SubmitSweepRequest request;
    request.set_spec_text(spec);
    request.set_spec_file_name(file);
    request.set_dry_run(dry_run);
    std::unique_ptr<grpc::ClientContext> owned = context == nullptr ? ContextWithToken(user_token_) : nullptr;
    return users_->SubmitSweep(context != nullptr ? context : owned.get(), request, response);
  }

  v1::SubmitSweepResponse Submit(const std::string& spec, bool dry_run = false) {
    v1::SubmitSweepResponse response;
    grpc::Status status = TrySubmit(spec, "tiny.yaml", &response, dry_run);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  void Register(const std::string& worker_id, int cpus = 1) {
    v1::RegisterRequest request;
    request.set_worker_id(worker_id);
    request.set_host("host-" + worker_id);
    request.set_cpu_slots(cpus);
    request.set_build_commit("abc123");
    request.set_protocol_version(wire::kProtocolVersion);
    (*request.mutable_labels())["rack"] = "a";
    v1::RegisterResponse response;
    grpc::Status status = workers_->Register(ContextWithToken(worker_token_).get(), request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  grpc::Status TryLease(const std::string& worker_id, v1::LeaseResponse* response, int cpus = 1,
                        std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    v1::LeaseRequest request;
    request.set_worker_id(worker_id);
    request.mutable_free()->set_cpu_slots(cpus);
    *request.mutable_wait() = google::protobuf::util::TimeUtil::MillisecondsToDuration(wait.count());
    return workers_->Lease(ContextWithToken(worker_token_).get(), request, response);
  }

  // A lease for the worker now, or nullopt when nothing fits.
  std::optional<v1::TrialLease> Lease(const std::string& worker_id, int cpus = 1) {
    v1::LeaseResponse response;
    grpc::Status status = TryLease(worker_id, &response, cpus);
    EXPECT_TRUE(status.ok()) << status.error_message();
    if (!response.has_lease()) return std::nullopt;
    return response.lease();
  }

  // The sweep of `spec` submitted, w1 registered, the first trial leased to it and run to success
  // (RunToSuccess); its lease, or nullopt (and a failed expectation) when none was leased.
  std::optional<v1::TrialLease> FirstTrialSucceeded(const std::string& spec) {
    Submit(spec);
    Register("w1");
    std::optional<v1::TrialLease> lease = Lease("w1");
    EXPECT_TRUE(lease.has_value()) << "nothing to lease";
    if (lease) RunToSuccess("w1", *lease);
    return lease;
  }

  // One trial of a one-cell sweep, workers w1 and w2 registered, leased to w1, which reported its
  // provenance and step 5 (batch 1); nullopt (and a failed expectation) when any of it did not work.
  std::optional<v1::TrialLease> OneTrialLeasedToW1AfterAReport() {
    Submit(TinySpec("tiny", 0, "1.0e-3", "[rope]"));
    Register("w1");
    Register("w2");
    std::optional<v1::TrialLease> lease = Lease("w1");
    if (!lease) return std::nullopt;
    grpc::Status reported = Report("w1", *lease, 1, {ProvenanceRecord(), StepRecord(5, 2.5)});
    EXPECT_TRUE(reported.ok()) << reported.error_message();
    if (!reported.ok()) return std::nullopt;
    return lease;
  }

  grpc::Status Report(const std::string& worker_id, const v1::TrialLease& lease, int64_t sequence,
                      const std::vector<std::string>& records, v1::ReportMetricsResponse* response = nullptr) {
    v1::ReportMetricsRequest request;
    request.set_worker_id(worker_id);
    request.set_trial_id(lease.trial_id());
    request.set_attempt(lease.attempt());
    FillBatch(sequence, records, request.mutable_batch());
    request.mutable_batch()->add_stderr_lines("threads: 1");
    v1::ReportMetricsResponse ignored;
    return workers_->ReportMetrics(ContextWithToken(worker_token_).get(), request,
                                   response != nullptr ? response : &ignored);
  }

  v1::CompleteRequest Completion(const std::string& worker_id, const v1::TrialLease& lease, v1::AttemptOutcome outcome,
                                 int64_t last_batch) {
    v1::CompleteRequest request;
    request.set_worker_id(worker_id);
    request.set_trial_id(lease.trial_id());
    request.set_attempt(lease.attempt());
    request.set_outcome(outcome);
    request.set_last_batch_sequence(last_batch);
    if (outcome != v1::OUTCOME_SUCCEEDED) {
      request.set_reason(outcome == v1::OUTCOME_FAILED ? "non-finite training loss at step 3" : "SIGTERM");
      request.set_exit_code(outcome == v1::OUTCOME_FAILED ? 3 : 75);
    }
    return request;
  }

  grpc::Status Complete(const v1::CompleteRequest& request, v1::CompleteResponse* response) {
    return workers_->Complete(ContextWithToken(worker_token_).get(), request, response);
  }

  // Runs a leased trial to the end: provenance and a step, then the last step and the final record,
  // then SUCCEEDED.
  void RunToSuccess(const std::string& worker_id, const v1::TrialLease& lease, double val_loss = 1.75) {
    ASSERT_TRUE(Report(worker_id, lease, 1, {ProvenanceRecord(), StepRecord(5, 2.5, 2.6)}).ok());
    ASSERT_TRUE(Report(worker_id, lease, 2, {StepRecord(10, 1.9, val_loss), FinalRecord(val_loss)}).ok());
    v1::CompleteResponse response;
    grpc::Status status = Complete(Completion(worker_id, lease, v1::OUTCOME_SUCCEEDED, 2), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.trial_state(), v1::TRIAL_STATE_SUCCEEDED);
  }

  grpc::Status Heartbeat(const std::string& worker_id, const v1::TrialLease& lease, v1::HeartbeatResponse* response) {
    v1::HeartbeatRequest request;
    request.set_worker_id(worker_id);
    request.set_trial_id(lease.trial_id());
    request.set_attempt(lease.attempt());
    return workers_->Heartbeat(ContextWithToken(worker_token_).get(), request, response);
  }

  // A worker that does not hold the lease's attempt (it was superseded, or never leased it) can
  // neither heartbeat nor complete it: both are FAILED_PRECONDITION.
  void ExpectFencedOff(const std::string& worker_id, const v1::TrialLease& lease) {
    v1::HeartbeatResponse beat;
    EXPECT_EQ(Heartbeat(worker_id, lease, &beat).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    v1::CompleteResponse completed;
    EXPECT_EQ(Complete(Completion(worker_id, lease, v1::OUTCOME_SUCCEEDED, 1), &completed).error_code(),
              grpc::StatusCode::FAILED_PRECONDITION);
  }

  // Calls a UserService method as the user; a failure is a test failure (and an empty response).
  template <typename Response, typename Request>
  Response AskUsers(grpc::Status (v1::UserService::Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& request) {
    Response response;
    grpc::Status status = ((*users_).*method)(ContextWithToken(user_token_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  v1::Trial GetTrial(int64_t trial_id) {
    v1::GetTrialRequest request;
    request.set_trial_id(trial_id);
    return AskUsers<v1::Trial>(&v1::UserService::Stub::GetTrial, request);
  }

  v1::Sweep GetSweep(int64_t sweep_id) {
    v1::GetSweepRequest request;
    request.set_sweep_id(sweep_id);
    return AskUsers<v1::Sweep>(&v1::UserService::Stub::GetSweep, request);
  }

  std::vector<v1::Trial> ListTrials(int64_t sweep_id, std::vector<v1::TrialState> states = {}) {
    v1::ListTrialsRequest request;
    request.set_sweep_id(sweep_id);
    for (v1::TrialState state : states) request.add_states(state);
    const auto response = AskUsers<v1::ListTrialsResponse>(&v1::UserService::Stub::ListTrials, request);
    return {response.trials().begin(), response.trials().end()};
  }

  std::vector<v1::Sweep> ListSweeps() {
    const auto response = AskUsers<v1::ListSweepsResponse>(&v1::UserService::Stub::ListSweeps, v1::ListSweepsRequest());
    return {response.sweeps().begin(), response.sweeps().end()};
  }

  // step -> value of one metric of a trial.
  std::map<int64_t, double> Curve(int64_t trial_id, const std::string& name) {
    v1::GetMetricsRequest request;
    request.set_trial_id(trial_id);
    request.add_names(name);
    const auto response = AskUsers<v1::GetMetricsResponse>(&v1::UserService::Stub::GetMetrics, request);
    std::map<int64_t, double> curve;
    for (const v1::MetricSeries& series : response.series()) {
      for (const v1::MetricPoint& point : series.points()) curve[point.step()] = point.value();
    }
    return curve;
  }

  // Expires what is due now and says how many (0 when the reaper, watching the clock, already did).
  size_t ExpireDueLeases() {
    StatusOr<std::vector<AttemptKey>> expired = server_->coordinator().reaper().ExpireDue();
    EXPECT_TRUE(expired.ok()) << expired.status().ToString();
    return expired.ok() ? expired->size() : 0;
  }

  ScratchDir scratch_;
  ManualClock clock_{FromUnixMicros(1'700'000'000'000'000)};
  ServerOptions options_;
  std::string user_token_;
  std::string worker_token_;
  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<v1::UserService::Stub> users_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
};

}  // namespace rung::server::testing
