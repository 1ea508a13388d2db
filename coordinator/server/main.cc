// rung-coordinator: the gRPC coordinator of rung (proto/rung.proto), serving `rung` users and
// `rung-worker` agents.
//
//   rung-coordinator --db rung.db --user-token-file user.token --worker-token-file worker.token
//                    [--viewer-token-file viewer.token] [--listen 127.0.0.1:50551] [--artifact-root DIR] [--lease-seconds 60]
//                    [--heartbeat-seconds S] [--tls-cert cert.pem --tls-key key.pem]
//                    [--health-listen 0.0.0.0:50552] [--check-at-start quick|full|none]
//                    [--restart-grace-seconds 10] [--max-trials-per-submission 100000]
//
// Locks the SQLite database (one coordinator per database file: a second one exits 1 naming the
// holder), opens (or creates) it, checks it (a damaged file is refused with how to recover it),
// gives every live lease a fresh period of at least the restart grace (workers that kept training
// while it was down are not declared stale), makes sure the artifact root holds its marker
// <root>/.rung-artifact-root (written once with a random id, kept across restarts; workers check
// they see it, core/common/artifact_root_marker.h; a marker that is not valid: exit 2 naming it),
// expires leases in the background, and serves.
// Prints "listening on HOST:PORT" on stdout once it serves (the port it bound, also for port 0);
// everything else goes to stderr. A token file that does not exist is created with a fresh token
// (mode 0600), once the database is open. SIGTERM or SIGINT: stops accepting calls, lets calls in
// flight finish for 1 s, cancels the rest (long computations such as fits stop at their next check),
// exits 0; every acknowledged write is already durable (each was committed before its answer).
// Exit codes: 0 after a signal, 1 when it cannot start, 2 bad arguments.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "core/common/command_line.h"
#include "coordinator/server/auth.h"
#include "coordinator/server/grpc_server.h"
#include "core/common/provenance.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  rung::server::ServerOptions options;
  CLI::App app{"rung-coordinator: the coordinator of rung sweeps (gRPC).\n"
               "Prints 'listening on HOST:PORT' on stdout once serving; SIGTERM/SIGINT shut it down.\n"
               "Exit codes: 0 after a signal, 1 cannot start, 2 bad arguments."};
  app.add_option("--listen", options.listen_address,
                 "host:port, [v6 host]:port or unix:path to listen on; port 0 picks a free port. Addresses "
                 "other than loopback need TLS")
      ->capture_default_str();
  app.add_option("--db", options.database_path,
                 "SQLite database of sweeps, trials and metrics (created if missing; local disk, never NFS)")
      ->required();
  app.add_option("--artifact-root", options.artifact_root,
                 "folder of every trial's checkpoints, shared by all workers (default: <db folder>/artifacts)");
  double lease_seconds = 60;
  double heartbeat_seconds = 0;
  app.add_option("--lease-seconds", lease_seconds,
                 "how long a lease lives without a heartbeat; fractions allowed")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  double restart_grace_seconds = 10;
  app.add_option("--restart-grace-seconds", restart_grace_seconds,
                 "after a start, every live lease lasts at least this long: time for workers that kept training "
                 "to reach this coordinator again")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  app.add_option("--heartbeat-seconds", heartbeat_seconds,
                 "how often workers heartbeat each trial (default: a sixth of the lease)")
      ->check(rung::PositiveNumberCheck());
  app.add_option("--user-token-file", options.user_token_file,
                 "file (mode 0600) with the bearer token of users (`rung`); created with a fresh token if missing")
      ->required();
  app.add_option("--worker-token-file", options.worker_token_file,
                 "file (mode 0600) with the bearer token of workers (rung-worker); created with a fresh token if "
                 "missing")
      ->required();
  app.add_option("--viewer-token-file", options.viewer_token_file,
                 "file (mode 0600) with the bearer token of viewers (dashboards, people who should only look: "
                 "queries, no submit, cancel, pause, resume, retry or release); created with a fresh token if missing; "
                 "without it there is no viewer role");
  app.add_option("--tls-cert", options.tls_cert_file, "PEM certificate chain: serve TLS (with --tls-key)");
  app.add_option("--tls-key", options.tls_key_file, "PEM private key of --tls-cert");
  app.add_option("--health-listen", options.health_listen_address,
                 "host:port of a second, plaintext listener serving only grpc.health.v1.Health (no tokens, no "
                 "data): for probes that cannot speak TLS, e.g. Kubernetes grpc probes");
  const std::map<std::string, rung::StoreOptions::StartCheck> checks = {
      {"quick", rung::StoreOptions::StartCheck::kQuick},
      {"full", rung::StoreOptions::StartCheck::kFull},
      {"none", rung::StoreOptions::StartCheck::kNone}};
  std::string start_check = "quick";
  app.add_option("--check-at-start", start_check,
                 "check the database before serving: quick (PRAGMA quick_check), full (PRAGMA integrity_check: "
                 "slower on large databases) or none")
      ->capture_default_str()
      ->check(CLI::IsMember({"quick", "full", "none"}));
  app.add_option("--max-trials-per-submission", options.max_trials_per_submission,
                 "refuse a SubmitSweep (and its dry run) whose spec expands to more trials; checked before it "
                 "expands")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, rung::kMaxTrialsCeiling));
  std::string rendezvous_ports = "29500-29999";
  app.add_option("--rendezvous-ports", rendezvous_ports,
                 "FIRST-LAST: ports a data-parallel trial leased to several workers meets on, at rank 0's worker "
                 "host (one per attempt); they must be reachable between the workers")
      ->capture_default_str();
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  const auto micros = [](double seconds) {
    return std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
  };
  options.lease_duration = micros(lease_seconds);
  options.restart_grace = micros(restart_grace_seconds);
  options.start_check = checks.at(start_check);
  {
    int first = 0;
    int last = 0;
    char dash = 0;
    std::istringstream range(rendezvous_ports);
    if (!(range >> first >> dash >> last) || dash != '-' || first < 1 || last < first || last > 65535) {
      std::cerr << "rung-coordinator: --rendezvous-ports must be FIRST-LAST with 1 <= FIRST <= LAST <= 65535, not '"
                << rendezvous_ports << "'\n";
      return kExitUsage;
    }
    options.rendezvous_first_port = first;
    options.rendezvous_port_count = last - first + 1;
  }
  options.heartbeat_interval = heartbeat_seconds > 0 ? micros(heartbeat_seconds) : options.lease_duration / 6;

  // Signals are taken by sigwait below: block them before gRPC starts its threads, which inherit
  // the mask, so no thread is interrupted by them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  if (rung::Status valid = rung::server::ValidateServerOptions(options); !valid.ok()) {
    std::cerr << "rung-coordinator: " << valid.message() << "\n";
    return kExitUsage;
  }
  options.create_missing_token_files = true;
  rung::StatusOr<std::unique_ptr<rung::server::CoordinatorServer>> server =
      rung::server::CoordinatorServer::Start(options);
  if (!server.ok()) {
    std::cerr << "rung-coordinator: " << server.status().message() << "\n";
    return server.status().code() == rung::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  std::cerr << "rung-coordinator " << rung::BuildCommit() << ": serving "
            << (options.tls_cert_file.empty() ? "plaintext (loopback only)" : "TLS") << " on "
            << (*server)->address() << "; database " << options.database_path << ", artifacts under "
            << (*server)->coordinator().store_options().artifact_root << "\n";
  if (!(*server)->health_address().empty()) {
    std::cerr << "rung-coordinator: health service (plaintext) on " << (*server)->health_address() << "\n";
  }
  std::cout << "listening on " << (*server)->address() << std::endl;

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cerr << "rung-coordinator: " << strsignal(signal_number) << ", shutting down\n";
  (*server)->Shutdown(std::chrono::seconds(1));
  (*server)->Wait();
  return 0;
}
