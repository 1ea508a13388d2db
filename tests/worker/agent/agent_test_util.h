// tests/worker/agent/agent_test_util.h
//
// What the agent tests share: a scratch folder, fake trainers (shell scripts that speak rung-train's
// protocol: JSON lines on stdout, exit codes, SIGTERM -> 75), a tiny real trial config for rung-train,
// and TestCoordinator: a real gRPC server on loopback implementing rung.v1.WorkerService with the
// contract's rules (bearer token, batch sequence numbers, duplicates acknowledged, fencing) and
// knobs a test turns (fail the next calls with UNAVAILABLE, answer CANCEL, forget workers, stop
// and restart on the same port).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "core/common/subprocess.h"
#include "proto/rung.grpc.pb.h"
#include "worker/agent/agent.h"
#include "worker/agent/clock.h"
#include "worker/agent/coordinator_client.h"

namespace rung::agent::testing {

// A fresh folder under the system's temporary folder, removed with the object.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string Path(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Sets an environment variable for the scope (child processes inherit it, as a worker's trainers
// inherit the worker's environment); restores what was there. Only while no other thread reads the
// environment.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value);
  ~ScopedEnvironment();
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Writes an executable /bin/sh script (mode 0755) and returns its path.
std::string WriteScript(const std::string& path, const std::string& body);

// Writes `text` to `path` with mode `mode`.
void WriteFile(const std::string& path, const std::string& text, unsigned mode = 0644);

// The lines of a file (empty when it does not exist).
std::vector<std::string> ReadLines(const std::string& path);

// A tiny real trial on the builtin corpus: 1 layer, d_model 32, seq 32, `steps` steps, a step record
// every `log_every` steps.
nlohmann::json TinyTrialConfig(int64_t steps, int64_t log_every);

// The whole text of a file ("" when it does not exist).
std::string FileText(const std::string& path);

// A client context carrying `Bearer token`, with a deadline `deadline` from now.
std::unique_ptr<grpc::ClientContext> BearerContext(const std::string& token,
                                                   std::chrono::seconds deadline = std::chrono::seconds(30));

// The user-API calls the end-to-end tests make over `users` with `token`: a non-OK status is a failed
// expectation naming it, and the response is returned as it came.
v1::SubmitSweepResponse SubmitSpecExpectingOk(v1::UserService::Stub& users, const std::string& token,
                                              const std::string& spec, const std::string& file_name,
                                              bool dry_run = false);
v1::Sweep GetSweepExpectingOk(v1::UserService::Stub& users, const std::string& token, int64_t sweep_id);
std::vector<v1::Trial> ListTrialsExpectingOk(v1::UserService::Stub& users, const std::string& token, int64_t sweep_id);

// Polls `condition` every 10 ms until it holds or `timeout` passes; returns its last value.
bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// Moves `clock` on by `step` every few real milliseconds until `condition` holds, or `timeout` of
// real time passes; returns its last value. For what takes real time too (a gRPC reconnection, a
// process) and is only waited for, never asserted to take some time.
bool AdvanceUntil(ManualClock& clock, const std::function<bool()>& condition,
                  Clock::Duration step = std::chrono::milliseconds(100),
                  std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A child process (core/common/subprocess.h) in `cwd`, its stdout readable by line, its stderr
// appended to a file; SIGKILLed and reaped if still running when destroyed.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& cwd, const std::string& stderr_path);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return process_ != nullptr; }
  // The next line of stdout (without '\n'), or "" after `timeout` or at its end.
  std::string ReadLine(std::chrono::milliseconds timeout);
  void Signal(int signal_number);
  // Waits up to `timeout` for the exit; its wait status (WIFEXITED, WEXITSTATUS, ...), or -1 while
  // it runs.
  int Wait(std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<Subprocess> process_;
};

inline constexpr char kTestToken[] = "worker-token-for-tests-0123456789";

// Agent options for the tests: worker "agent-test" on localhost with `cpu_slots` slots, `trainer_script`
// written as scratch's trainer.sh, its work dir scratch's "work", and short waits and backoffs
// everywhere (lease long-polls of 100 ms, batches after 50 ms, a 20 s stop grace).
AgentOptions QuickAgentOptions(const ScratchDir& scratch, int cpu_slots, const std::string& trainer_script);

// Options of a client of the coordinator at `address` with `token`: 2 s calls, a single try, and
// reconnects within 100 ms.
CoordinatorClientOptions QuickClientOptions(const std::string& address, const std::string& token = kTestToken);

// A client of the coordinator at `address` with the test token, quick timeouts and a single try,
// waiting on `clock`, registered as `worker_id`. Fails the test (and returns null) if registration fails.
std::unique_ptr<CoordinatorClient> ConnectRegisteredClient(const std::string& address, const std::string& worker_id,
                                                           const Clock& clock = RealClock());

// A WorkerService on 127.0.0.1 that keeps what it was told.
class TestCoordinator final : public v1::WorkerService::Service {
 public:
  TestCoordinator();
  ~TestCoordinator() override;

  // Starts serving on `port` (0: a free one); returns the address. Restarting after Stop() with the
  // old port brings the "same" coordinator back.
  std::string Start(int port = 0);
  void Stop();
  int port() const { return port_; }

  // ----------------------------------------------------------------------------- knobs
  void set_heartbeat_interval(std::chrono::milliseconds interval);
  void QueueLease(const v1::TrialLease& lease);
  // The next `calls` calls of `method` ("ReportMetrics", "Heartbeat", ...) fail with UNAVAILABLE.
  void FailNext(const std::string& method, int calls);
  // Heartbeats of `trial_id` answer CANCEL from now on.
  void CancelTrial(int64_t trial_id, const std::string& reason);
  // Every report of `trial_id` is fenced (FAILED_PRECONDITION) from now on.
  void FenceTrial(int64_t trial_id);
  // The next calls of unknown workers get NOT_FOUND until they register again.
  void ForgetWorkers();

  // ----------------------------------------------------------------------------- what it was told
  struct Batch {
    int64_t trial_id = 0, attempt = 0, sequence = 0;
    v1::ReportMetricsRequest request;
  };
  std::vector<v1::RegisterRequest> registrations() const;
  std::vector<v1::LeaseRequest> lease_requests() const;
  std::vector<Batch> committed_batches(int64_t trial_id) const;  // in commit order
  int duplicate_batches() const;
  std::vector<v1::CompleteRequest> completes() const;
  int heartbeats(int64_t trial_id) const;
  // Every call of `method` that reached the service, refused ones included.
  int calls(const std::string& method) const;
  std::vector<std::string> authorization_headers() const;  // of every call, in order
  size_t queued_leases() const;

  // Waits until `condition(*this)` holds (checked whenever a call arrives, and every 50 ms).
  bool WaitFor(const std::function<bool(const TestCoordinator&)>& condition, std::chrono::milliseconds timeout);

  // ----------------------------------------------------------------------------- WorkerService
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
  // Checks the token and the failure knobs; REQUIRES mutex_ held.
  grpc::Status Admit(grpc::ServerContext* context, const std::string& method, const std::string& worker_id);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::chrono::milliseconds heartbeat_interval_{200};
  std::deque<v1::TrialLease> leases_;
  std::map<std::string, int> fail_next_;
  std::map<int64_t, std::string> cancelled_;
  std::set<int64_t> fenced_;
  std::set<std::string> known_workers_;
  std::vector<v1::RegisterRequest> registrations_;
  std::vector<v1::LeaseRequest> lease_requests_;
  std::map<std::pair<int64_t, int64_t>, int64_t> last_sequence_;  // (trial, attempt) -> committed
  std::vector<Batch> batches_;
  int duplicates_ = 0;
  std::vector<v1::CompleteRequest> completes_;
  std::map<int64_t, int> heartbeats_;
  std::map<std::string, int> calls_;
  std::vector<std::string> authorizations_;
};

}  // namespace rung::agent::testing
