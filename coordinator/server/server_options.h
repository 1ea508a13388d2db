// coordinator/server/server_options.h
//
// What a coordinator server is started with, its checks, and the transport credentials it implies.
//
// Transport. With --tls-cert/--tls-key the server speaks TLS on any address. Without them it speaks
// plaintext, and only where nobody else can listen in: a loopback address (127.0.0.0/8, ::1,
// localhost) or a unix: socket, enforced by gRPC's local credentials. A non-loopback address
// without TLS is refused, because the bearer tokens would cross the network in the clear. Both
// kinds of credentials carry the token authenticator (auth.h), which gRPC attaches only to secure
// (TLS or local) credentials.
//
// Example:
//   ServerOptions options;
//   options.listen_address = "127.0.0.1:0";   // port 0: the kernel picks one
//   options.user_token_file = "user.token";
//   options.worker_token_file = "worker.token";
//   RUNG_RETURN_IF_ERROR(ValidateServerOptions(options));
//
// Thread safety: values and reentrant functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/security/server_credentials.h>

#include "coordinator/store/store_options.h"
#include "core/common/status.h"
#include "sweeps/spec/expansion_limits.h"

namespace rung::server {

inline constexpr int kDefaultPort = 50551;

struct ServerOptions {
  // host:port, [v6 host]:port or unix:path. Port 0 picks a free port (CoordinatorServer::address()
  // tells which).
  std::string listen_address = "127.0.0.1:" + std::to_string(kDefaultPort);
  std::string database_path;      // the SQLite database; required
  std::string artifact_root;      // checkpoints; "" = <database folder>/artifacts
  std::string user_token_file;    // required; 0600
  std::string worker_token_file;  // required; 0600
  std::string viewer_token_file;  // optional; 0600: a token that may only query (auth.h); "" = none
  std::string tls_cert_file;      // PEM certificate chain; with tls_key_file
  std::string tls_key_file;       // PEM private key; with tls_cert_file
  // Optional second listener that serves only grpc.health.v1.Health, in plaintext on any address
  // (it carries no token and no data). For probes that cannot speak TLS, such as Kubernetes'
  // native `grpc:` probes. "" = none.
  std::string health_listen_address;
  // Told to workers at registration: how often they heartbeat each trial, and how long a lease
  // lives without one (the store expires it then).
  std::chrono::microseconds heartbeat_interval = std::chrono::seconds(10);
  std::chrono::microseconds lease_duration = std::chrono::seconds(60);
  // What the database is checked with before serving (StoreOptions::start_check).
  StoreOptions::StartCheck start_check = StoreOptions::StartCheck::kQuick;
  // rung-coordinator creates missing token files (with fresh tokens), after the database opened.
  bool create_missing_token_files = false;
  // After a restart, live leases last at least this long (StoreOptions::restart_grace).
  std::chrono::microseconds restart_grace = std::chrono::seconds(10);
  // The longest a WorkerService.Lease call is held open waiting for a trial.
  std::chrono::milliseconds max_lease_wait = std::chrono::seconds(60);
  // Rendezvous ports of gangs across workers (gang_leases.h): first_port .. first_port + count - 1
  // on rank 0's worker host; each gang attempt takes one.
  int rendezvous_first_port = 29500;
  int rendezvous_port_count = 500;
  // The most trials one SubmitSweep (or its dry run) may expand to, checked before it expands
  // (sweeps/spec/expansion_limits.h); --max-trials-per-submission.
  int64_t max_trials_per_submission = kDefaultMaxTrials;
};

// INVALID_ARGUMENT, naming the flag to fix, when: the address has no port, the database or a token
// file is not given, only one of the TLS files is given, the address is not loopback and TLS is
// off, the health address (if any) is not host:port, or the heartbeat interval is not shorter than
// the lease, or the trial limit per submission is not positive.
Status ValidateServerOptions(const ServerOptions& options);

// The listen address with its port replaced by `port` (the one the server bound): "127.0.0.1:0",
// 43117 -> "127.0.0.1:43117". unix: addresses come back unchanged.
std::string BoundAddress(std::string_view listen_address, int port);

// TLS credentials from the certificate and key files (no client certificates: clients
// authenticate with tokens), or local credentials (UDS for unix:, LOCAL_TCP otherwise).
// REQUIRES: ValidateServerOptions(options).ok(). Errors: NOT_FOUND for a missing TLS file, INVALID_ARGUMENT when
// the files hold no certificate, no unencrypted key, or a key of another certificate.
StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerOptions& options);

}  // namespace rung::server
