// worker/agent/coordinator_client.h
//
// The agent's side of rung.v1.WorkerService (proto/rung.proto): one channel to the coordinator,
// every call with `authorization: Bearer <worker token>` and a deadline, transient failures retried
// with backoff, and the registration remembered so that a coordinator that forgot this worker (it
// restarted) is told again.
//
// Errors come back as rung::Status values with the coordinator's own code (proto/grpc_status.h) and
// the method in the message:
//   IsTransient()        UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED or UNKNOWN after
//                        `max_tries` tries: the coordinator is away or busy; keep the work and try
//                        again later
//   kNotFound            no such trial (or worker, after registering again did not help)
//   kFailedPrecondition  the attempt is fenced: stop it and report nothing more
//   kOutOfRange          a metric batch out of sequence
//   kInvalidArgument     a bad request
//   kUnauthenticated,    the coordinator refused the worker token (the message names the flag to fix)
//   kPermissionDenied
//   kUnimplemented       a coordinator without this method
//   kCancelled           the call was interrupted through its CallInterrupter (or the server cancelled it)
//
// Transport: plaintext when no TLS roots are given, which Connect allows only for a coordinator on
// loopback or a unix socket (INVALID_ARGUMENT otherwise: the token would cross the network in the
// clear), else TLS verified against the given roots. The channel reconnects with a short
// backoff (max_reconnect_backoff) and, in a process that called PollReconnectsPromptly, notices the
// new connection at once, so a coordinator that returns is found again within about two seconds.
//
// Example:
//   CoordinatorClientOptions options;
//   options.address = "127.0.0.1:50551";
//   options.token = *ReadBearerTokenFile("worker.token");
//   auto client = CoordinatorClient::Connect(options);          // no call yet
//   StatusOr<v1::RegisterResponse> registered = (*client)->Register(request);
//   v1::LeaseRequest lease;                                      // worker_id is filled in
//   lease.set_free_cpu_slots(4);
//   StatusOr<v1::LeaseResponse> answer = (*client)->Lease(lease, std::chrono::seconds(20), &interrupter);
//
// Thread safety: thread-safe; calls may run concurrently from any number of threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <grpcpp/grpcpp.h>

#include "core/common/status.h"
#include "proto/rung.grpc.pb.h"
#include "worker/agent/backoff.h"
#include "worker/agent/clock.h"

namespace rung::agent {

struct CoordinatorClientOptions {
  std::string address;       // host:port, [v6]:port or unix:path
  std::string token;         // the worker token itself (not its file)
  std::string tls_root_pem;  // PEM root certificates; "" = plaintext
  // Deadline of one unary call; a Lease long-poll gets its wait on top.
  std::chrono::milliseconds call_timeout{10000};
  // Tries of one call while it fails transiently, with retry_backoff between them.
  int max_tries = 3;
  BackoffPolicy retry_backoff{std::chrono::milliseconds(100), std::chrono::milliseconds(2000), 2.0};
  // The longest the channel waits between two attempts to reconnect (gRPC's default is 120 s).
  std::chrono::milliseconds max_reconnect_backoff{2000};
};

// gRPC notices that a channel's new connection is up only when something polls it; between the
// agent's calls (which fail fast while the coordinator is away) that is gRPC's backup poller, every
// 5 s by default, so a coordinator restarted in a second was found again only 5-10 s later, past
// short leases. This sets the backup poll to every kBackupPollMilliseconds (the environment variable
// GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS, which gRPC reads once, when it initialises; a value
// the environment already holds is kept). Call it first in main(), before any gRPC object exists and
// before other threads start (it calls setenv).
inline constexpr int kBackupPollMilliseconds = 100;
void PollReconnectsPromptly();

// True for statuses worth trying again later: the coordinator was unreachable, out of time or
// resources, or could not say what went wrong (see above).
bool IsTransient(const Status& status);

// Cancels calls of a CoordinatorClient from another thread: the agent's shutdown, or a lease
// long-poll that should be asked again because slots were freed.
class CallInterrupter {
 public:
  // SleepFor() waits on `clock`. REQUIRES: `clock` outlives the interrupter.
  explicit CallInterrupter(const Clock& clock = RealClock()) : clock_(clock) {}

  // Cancels every call in flight that was given this interrupter; later calls and their retry waits
  // return kCancelled at once, until Reset().
  void Interrupt();
  // Lets calls through again.
  void Reset();
  bool interrupted() const;
  // Waits `duration` on its clock, or less when interrupted; false when interrupted.
  bool SleepFor(std::chrono::milliseconds duration);

 private:
  friend class CoordinatorClient;
  bool Attach(grpc::ClientContext* context);  // false when interrupted (the call must not start)
  void Detach(grpc::ClientContext* context);

  const Clock& clock_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::set<grpc::ClientContext*> active_;
  bool interrupted_ = false;
};

class CoordinatorClient {
 public:
  // Creates the channel (connecting lazily). The waits between tries are on `clock` (on the
  // interrupter's, for a call given one); gRPC's own deadlines are real time. Errors:
  // INVALID_ARGUMENT for an empty address or token. REQUIRES: `clock` outlives the client.
  static StatusOr<std::unique_ptr<CoordinatorClient>> Connect(const CoordinatorClientOptions& options,
                                                              const Clock& clock = RealClock());

  // Registers the worker (or updates it); remembers the request and the id the coordinator
  // answered, which every later call carries as its worker_id.
  StatusOr<v1::RegisterResponse> Register(const v1::RegisterRequest& request, CallInterrupter* interrupter = nullptr);

  // Long-polls for one trial for up to `wait`. No lease is a response without `lease`.
  // REQUIRES: Register succeeded before.
  StatusOr<v1::LeaseResponse> Lease(v1::LeaseRequest request, std::chrono::milliseconds wait,
                                    CallInterrupter* interrupter = nullptr);
  StatusOr<v1::HeartbeatResponse> Heartbeat(v1::HeartbeatRequest request, CallInterrupter* interrupter = nullptr);
  StatusOr<v1::ReportMetricsResponse> ReportMetrics(v1::ReportMetricsRequest request,
                                                    CallInterrupter* interrupter = nullptr);
  StatusOr<v1::CompleteResponse> Complete(v1::CompleteRequest request, CallInterrupter* interrupter = nullptr);

  // The id the coordinator registered ("" before Register succeeded).
  std::string worker_id() const;
  // The answer of the last Register that succeeded, the agent's own or one made again for a
  // coordinator that forgot this worker (an empty message before any).
  v1::RegisterResponse last_registration() const;

 private:
  CoordinatorClient(const CoordinatorClientOptions& options, const Clock& clock);

  template <typename Request, typename Response>
  using Rpc = grpc::Status (v1::WorkerService::Stub::*)(grpc::ClientContext*, const Request&, Response*);

  // One call with retries of transient failures. With `reregister`, a NOT_FOUND (a coordinator that
  // does not know this worker) registers again and retries once.
  template <typename Request, typename Response>
  StatusOr<Response> Call(const char* method, Rpc<Request, Response> rpc, const Request& request,
                          std::chrono::milliseconds timeout, CallInterrupter* interrupter, bool reregister);
  // One try, no retries.
  template <typename Request, typename Response>
  Status CallOnce(const char* method, Rpc<Request, Response> rpc, const Request& request,
                  std::chrono::milliseconds timeout, CallInterrupter* interrupter, Response* response);

  CoordinatorClientOptions options_;
  const Clock& clock_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::WorkerService::Stub> stub_;
  mutable std::mutex mutex_;
  std::optional<v1::RegisterRequest> registration_;  // the last successful Register request
  std::string worker_id_;
  v1::RegisterResponse last_registration_;
};

}  // namespace rung::agent
