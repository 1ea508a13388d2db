// tests/worker/agent/agent_test_util.cc
#include "tests/worker/agent/agent_test_util.h"

#include "proto/protocol_version.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <thread>

#include <google/protobuf/util/time_util.h>
#include <gtest/gtest.h>

namespace rung::agent::testing {

ScratchDir::ScratchDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "rung-agent-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void WriteFile(const std::string& path, const std::string& text, unsigned mode) {
  {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  }
  ::chmod(path.c_str(), mode);
}

ScopedEnvironment::ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
  if (const char* old = ::getenv(name)) old_ = old;
  ::setenv(name, value.c_str(), 1);
}

ScopedEnvironment::~ScopedEnvironment() {
  if (old_) {
    ::setenv(name_, old_->c_str(), 1);
  } else {
    ::unsetenv(name_);
  }
}

std::string WriteScript(const std::string& path, const std::string& body) {
  WriteFile(path, "#!/bin/sh\n" + body, 0755);
  return path;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::unique_ptr<grpc::ClientContext> BearerContext(const std::string& token, std::chrono::seconds deadline) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
  context->set_deadline(std::chrono::system_clock::now() + deadline);
  return context;
}

v1::SubmitSweepResponse SubmitSpecExpectingOk(v1::UserService::Stub& users, const std::string& token,
                                              const std::string& spec, const std::string& file_name, bool dry_run) {
  v1::SubmitSweepRequest submit;
  submit.set_spec_text(spec);
  submit.set_spec_file_name(file_name);
  submit.set_dry_run(dry_run);
  v1::SubmitSweepResponse submitted;
  grpc::Status status = users.SubmitSweep(BearerContext(token).get(), submit, &submitted);
  EXPECT_TRUE(status.ok()) << "SubmitSweep: " << status.error_message();
  return submitted;
}

v1::Sweep GetSweepExpectingOk(v1::UserService::Stub& users, const std::string& token, int64_t sweep_id) {
  v1::GetSweepRequest get;
  get.set_sweep_id(sweep_id);
  v1::Sweep sweep;
  grpc::Status status = users.GetSweep(BearerContext(token).get(), get, &sweep);
  EXPECT_TRUE(status.ok()) << "GetSweep: " << status.error_message();
  return sweep;
}

std::vector<v1::Trial> ListTrialsExpectingOk(v1::UserService::Stub& users, const std::string& token, int64_t sweep_id) {
  v1::ListTrialsRequest list;
  list.set_sweep_id(sweep_id);
  v1::ListTrialsResponse trials;
  grpc::Status status = users.ListTrials(BearerContext(token).get(), list, &trials);
  EXPECT_TRUE(status.ok()) << "ListTrials: " << status.error_message();
  return {trials.trials().begin(), trials.trials().end()};
}

nlohmann::json TinyTrialConfig(int64_t steps, int64_t log_every) {
  return {{"seed", 1},
          {"data", {{"source", "builtin"}, {"seq_len", 32}}},
          {"model", {{"layers", 1}, {"d_model", 32}, {"heads", 2}}},
          {"position", {{"variant", "rope"}}},
          {"train",
           {{"steps", steps},
            {"batch_size", 8},
            {"lr", 3e-3},
            {"schedule", {{"name", "cosine"}, {"warmup_steps", 2}}},
            {"eval_every", 10},
            {"eval_batches", 2},
            {"log_every", log_every},
            {"diagnostics_sequences", 0}}},
          {"resources", {{"cpus", 1}}}};
}

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

bool AdvanceUntil(ManualClock& clock, const std::function<bool()>& condition, Clock::Duration step,
                  std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    clock.Advance(step);
    WaitUntil(condition, std::chrono::milliseconds(5));
  }
  return true;
}

// ---------------------------------------------------------------------------------- ChildProcess

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& cwd,
                           const std::string& stderr_path) {
  SubprocessOptions options;
  options.argv = argv;
  options.working_dir = cwd;
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::AppendTo(stderr_path, 0644);
  StatusOr<std::unique_ptr<Subprocess>> started = Subprocess::Start(options);
  if (!started.ok()) {
    ADD_FAILURE() << "cannot start " << (argv.empty() ? std::string("nothing") : argv[0]) << ": "
                  << started.status().ToString();
    return;
  }
  process_ = std::move(started).value();
}

std::string ChildProcess::ReadLine(std::chrono::milliseconds timeout) {
  if (process_ == nullptr) return "";
  return process_->ReadLine(Stream::kStdout, timeout).value_or("");
}

void ChildProcess::Signal(int signal_number) {
  if (process_ != nullptr) process_->Signal(signal_number).IgnoreError();  // a test notices by the exit
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  if (process_ == nullptr) return -1;
  StatusOr<ExitStatus> exit = process_->Wait(timeout);
  if (!exit.ok()) return -1;
  return exit->signal != 0 ? exit->signal : exit->code << 8;  // as waitpid(2) encodes it
}

CoordinatorClientOptions QuickClientOptions(const std::string& address, const std::string& token) {
  CoordinatorClientOptions options;
  options.address = address;
  options.token = token;
  options.call_timeout = std::chrono::seconds(2);
  options.max_tries = 1;
  options.max_reconnect_backoff = std::chrono::milliseconds(100);
  return options;
}

std::unique_ptr<CoordinatorClient> ConnectRegisteredClient(const std::string& address, const std::string& worker_id,
                                                           const Clock& clock) {
  std::unique_ptr<CoordinatorClient> client =
      std::move(CoordinatorClient::Connect(QuickClientOptions(address), clock)).value();
  v1::RegisterRequest registration;
  registration.set_worker_id(worker_id);
  StatusOr<v1::RegisterResponse> registered = client->Register(registration);
  if (!registered.ok()) {
    ADD_FAILURE() << "Register: " << registered.status().message();
    return nullptr;
  }
  return client;
}

AgentOptions QuickAgentOptions(const ScratchDir& scratch, int cpu_slots, const std::string& trainer_script) {
  AgentOptions options;
  options.worker_id = "agent-test";
  options.host = "localhost";
  options.cpu_slots = cpu_slots;
  options.lease_wait = std::chrono::milliseconds(100);
  options.report_timeout = std::chrono::seconds(10);
  options.retry_backoff = {std::chrono::milliseconds(20), std::chrono::milliseconds(100), 2.0};
  options.attempt.trainer_path = WriteScript(scratch.Path("trainer.sh"), trainer_script);
  options.attempt.work_dir = scratch.Path("work");
  options.attempt.stop_grace = std::chrono::seconds(20);
  options.attempt.relay.batch_delay = std::chrono::milliseconds(50);
  options.attempt.relay.retry_backoff = {std::chrono::milliseconds(20), std::chrono::milliseconds(100), 2.0};
  options.attempt.report_backoff = {std::chrono::milliseconds(20), std::chrono::milliseconds(100), 2.0};
  EXPECT_TRUE(ValidateAgentOptions(options).ok()) << ValidateAgentOptions(options).ToString();
  return options;
}

// ------------------------------------------------------------------------------- TestCoordinator

TestCoordinator::TestCoordinator() = default;

TestCoordinator::~TestCoordinator() { Stop(); }

std::string TestCoordinator::Start(int port) {
  grpc::ServerBuilder builder;
  int selected = 0;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &selected);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
  EXPECT_NE(server_, nullptr) << "cannot serve on 127.0.0.1:" << port;
  port_ = selected;
  return "127.0.0.1:" + std::to_string(selected);
}

void TestCoordinator::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server_->Wait();
  server_.reset();
}

void TestCoordinator::set_heartbeat_interval(std::chrono::milliseconds interval) {
  std::lock_guard<std::mutex> lock(mutex_);
  heartbeat_interval_ = interval;
}

void TestCoordinator::QueueLease(const v1::TrialLease& lease) {
  std::lock_guard<std::mutex> lock(mutex_);
  leases_.push_back(lease);
  changed_.notify_all();
}

void TestCoordinator::FailNext(const std::string& method, int calls) {
  std::lock_guard<std::mutex> lock(mutex_);
  fail_next_[method] = calls;
}

void TestCoordinator::CancelTrial(int64_t trial_id, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_[trial_id] = reason;
}

void TestCoordinator::FenceTrial(int64_t trial_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  fenced_.insert(trial_id);
}

void TestCoordinator::ForgetWorkers() {
  std::lock_guard<std::mutex> lock(mutex_);
  known_workers_.clear();
}

std::vector<v1::RegisterRequest> TestCoordinator::registrations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return registrations_;
}

std::vector<v1::LeaseRequest> TestCoordinator::lease_requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lease_requests_;
}

std::vector<TestCoordinator::Batch> TestCoordinator::committed_batches(int64_t trial_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Batch> batches;
  for (const Batch& batch : batches_) {
    if (batch.trial_id == trial_id) batches.push_back(batch);
  }
  return batches;
}

int TestCoordinator::duplicate_batches() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return duplicates_;
}

std::vector<v1::CompleteRequest> TestCoordinator::completes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completes_;
}

int TestCoordinator::calls(const std::string& method) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = calls_.find(method);
  return found == calls_.end() ? 0 : found->second;
}

int TestCoordinator::heartbeats(int64_t trial_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = heartbeats_.find(trial_id);
  return found == heartbeats_.end() ? 0 : found->second;
}

std::vector<std::string> TestCoordinator::authorization_headers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return authorizations_;
}

size_t TestCoordinator::queued_leases() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return leases_.size();
}

bool TestCoordinator::WaitFor(const std::function<bool(const TestCoordinator&)>& condition,
                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition(*this)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

grpc::Status TestCoordinator::Admit(grpc::ServerContext* context, const std::string& method,
                                    const std::string& worker_id) {
  const auto& metadata = context->client_metadata();
  auto header = metadata.find("authorization");
  const std::string authorization =
      header == metadata.end() ? "" : std::string(header->second.data(), header->second.size());
  authorizations_.push_back(authorization);
  ++calls_[method];
  if (authorization != std::string("Bearer ") + kTestToken) {
    return {grpc::StatusCode::UNAUTHENTICATED, "missing or wrong bearer token"};
  }
  if (int& failures = fail_next_[method]; failures > 0) {
    --failures;
    return {grpc::StatusCode::UNAVAILABLE, "test coordinator: failing " + method + " on purpose"};
  }
  if (method != "Register" && known_workers_.count(worker_id) == 0) {
    return {grpc::StatusCode::NOT_FOUND, "unknown worker " + worker_id + ": register again"};
  }
  return grpc::Status::OK;
}

grpc::Status TestCoordinator::Register(grpc::ServerContext* context, const v1::RegisterRequest* request,
                                       v1::RegisterResponse* response) {
  std::lock_guard<std::mutex> lock(mutex_);
  changed_.notify_all();
  if (grpc::Status admitted = Admit(context, "Register", request->worker_id()); !admitted.ok()) return admitted;
  registrations_.push_back(*request);
  known_workers_.insert(request->worker_id());
  response->set_worker_id(request->worker_id());
  *response->mutable_heartbeat_interval() =
      google::protobuf::util::TimeUtil::MillisecondsToDuration(heartbeat_interval_.count());
  *response->mutable_lease_duration() =
      google::protobuf::util::TimeUtil::MillisecondsToDuration(heartbeat_interval_.count() * 10);
  return grpc::Status::OK;
}

grpc::Status TestCoordinator::Lease(grpc::ServerContext* context, const v1::LeaseRequest* request,
                                    v1::LeaseResponse* response) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.notify_all();
  if (grpc::Status admitted = Admit(context, "Lease", request->worker_id()); !admitted.ok()) return admitted;
  lease_requests_.push_back(*request);
  const auto wait = std::min<int64_t>(google::protobuf::util::TimeUtil::DurationToMilliseconds(request->wait()), 100);
  changed_.wait_for(lock, std::chrono::milliseconds(wait), [this] { return !leases_.empty(); });
  if (leases_.empty() || context->IsCancelled()) return grpc::Status::OK;
  if (leases_.front().cpu_slots() > request->free().cpu_slots()) return grpc::Status::OK;  // does not fit
  *response->mutable_lease() = leases_.front();
  leases_.pop_front();
  return grpc::Status::OK;
}

grpc::Status TestCoordinator::Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest* request,
                                        v1::HeartbeatResponse* response) {
  std::lock_guard<std::mutex> lock(mutex_);
  changed_.notify_all();
  if (grpc::Status admitted = Admit(context, "Heartbeat", request->worker_id()); !admitted.ok()) return admitted;
  ++heartbeats_[request->trial_id()];
  if (fenced_.count(request->trial_id()) != 0) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "attempt " + std::to_string(request->attempt()) + " is fenced"};
  }
  if (auto cancelled = cancelled_.find(request->trial_id()); cancelled != cancelled_.end()) {
    response->set_action(v1::HeartbeatResponse::ACTION_CANCEL);
    response->set_reason(cancelled->second);
  } else {
    response->set_action(v1::HeartbeatResponse::ACTION_CONTINUE);
  }
  return grpc::Status::OK;
}

grpc::Status TestCoordinator::ReportMetrics(grpc::ServerContext* context, const v1::ReportMetricsRequest* request,
                                            v1::ReportMetricsResponse* response) {
  std::lock_guard<std::mutex> lock(mutex_);
  changed_.notify_all();
  if (grpc::Status admitted = Admit(context, "ReportMetrics", request->worker_id()); !admitted.ok()) return admitted;
  if (fenced_.count(request->trial_id()) != 0) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "attempt " + std::to_string(request->attempt()) + " is fenced"};
  }
  const int64_t sequence = request->batch().sequence();
  int64_t& last = last_sequence_[{request->trial_id(), request->attempt()}];
  if (sequence <= last) {
    ++duplicates_;
    response->set_acknowledged_sequence(last);
    response->set_duplicate(true);
    return grpc::Status::OK;
  }
  if (sequence != last + 1) {
    return {grpc::StatusCode::OUT_OF_RANGE, "batch " + std::to_string(sequence) + " after " + std::to_string(last)};
  }
  last = sequence;
  batches_.push_back({request->trial_id(), request->attempt(), sequence, *request});
  response->set_acknowledged_sequence(last);
  return grpc::Status::OK;
}

grpc::Status TestCoordinator::Complete(grpc::ServerContext* context, const v1::CompleteRequest* request,
                                       v1::CompleteResponse* response) {
  std::lock_guard<std::mutex> lock(mutex_);
  changed_.notify_all();
  if (grpc::Status admitted = Admit(context, "Complete", request->worker_id()); !admitted.ok()) return admitted;
  if (fenced_.count(request->trial_id()) != 0 || cancelled_.count(request->trial_id()) != 0) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "attempt " + std::to_string(request->attempt()) + " is not live"};
  }
  const int64_t committed = last_sequence_[{request->trial_id(), request->attempt()}];
  if (request->last_batch_sequence() != committed) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "batches up to " + std::to_string(request->last_batch_sequence()) +
                                                       " not all received (have " + std::to_string(committed) + ")"};
  }
  completes_.push_back(*request);
  response->set_trial_state(request->outcome() == v1::OUTCOME_SUCCEEDED ? v1::TRIAL_STATE_SUCCEEDED
                                                                        : v1::TRIAL_STATE_PENDING);
  return grpc::Status::OK;
}

}  // namespace rung::agent::testing
