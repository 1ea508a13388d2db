// coordinator/server/grpc_server.h
//
// The coordinator's gRPC server: rung.v1.UserService and rung.v1.WorkerService behind bearer-token
// authentication, plus the standard health service (grpc.health.v1.Health, SERVING while up) and
// server reflection (grpcurl and friends), both open without a token. With
// options.health_listen_address, a second plaintext server answers the health service only (same
// SERVING/NOT_SERVING), for probes that cannot speak TLS. Shaped like gRPC's
// route_guide RunServer: build, register, start, wait. The services run on a Coordinator
// (coordinator.h): the SQLite store at options.database_path, reconciled on start.
//
// Example:
//   ServerOptions options;
//   options.listen_address = "127.0.0.1:0";
//   options.user_token_file = "user.token";
//   options.worker_token_file = "worker.token";
//   options.database_path = "rung.db";
//   StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options);
//   if (!server.ok()) return server.status();
//   std::cout << "listening on " << (*server)->address() << "\n";
//   ...
//   (*server)->Shutdown();
//
// Thread safety: Start once; address() from any thread; Shutdown() from any thread, any number of
// times (the first one counts); Wait() from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "coordinator/server/auth.h"
#include "coordinator/domain/coordinator.h"
#include "coordinator/server/server_options.h"
#include "coordinator/server/user_service.h"
#include "coordinator/server/worker_service.h"
#include "coordinator/store/clock.h"
#include "core/common/status.h"

namespace rung::server {

class CoordinatorServer {
 public:
  // Validates the options, opens the database (its lock, its check at start; every live lease gets
  // a fresh period), makes sure the artifact root has its marker (created with the root when
  // missing, kept when there: core/common/artifact_root_marker.h), creates missing token files when
  // asked to, reads both, builds the credentials and starts serving. `clock` (for tests: a
  // ManualClock) is the time of the store; nullptr: the system clock. Errors: INVALID_ARGUMENT
  // (options, tokens, TLS files; an artifact root that cannot be created or written, or whose
  // .rung-artifact-root is not a marker), NOT_FOUND (a token or TLS file is missing),
  // FAILED_PRECONDITION (a token file others can read; a database newer than this build, held by
  // another coordinator, or damaged; an artifact root marker that cannot be read),
  // RESOURCE_EXHAUSTED (cannot open the database; no space for the marker), UNAVAILABLE (cannot
  // listen on the address: in use, or not an address of this host).
  // REQUIRES: `clock`, if given, outlives the server.
  static StatusOr<std::unique_ptr<CoordinatorServer>> Start(const ServerOptions& options,
                                                            const Clock* clock = nullptr);

  // Shuts down (as Shutdown()) and waits for the server to stop.
  ~CoordinatorServer();
  CoordinatorServer(const CoordinatorServer&) = delete;
  CoordinatorServer& operator=(const CoordinatorServer&) = delete;

  // The address it listens on, with the port it bound: "127.0.0.1:43117" (for --listen
  // 127.0.0.1:0), or the unix: address as given.
  const std::string& address() const { return address_; }
  const ServerOptions& options() const { return options_; }
  // The health-only listener's address with its bound port; "" without one.
  const std::string& health_address() const { return health_address_; }

  // The state behind the services (tests drive lease expiry through coordinator().reaper()).
  Coordinator& coordinator() { return *coordinator_; }

  // Stops accepting calls, lets calls in flight finish for up to `grace`, then cancels the rest.
  // Waiting Lease calls answer UNAVAILABLE at once. The health service answers NOT_SERVING from the
  // start of the shutdown.
  void Shutdown(std::chrono::milliseconds grace = std::chrono::seconds(5));

  // Blocks until the server has shut down.
  void Wait();

 private:
  CoordinatorServer(const ServerOptions& options, std::shared_ptr<BearerTokenAuthenticator> authenticator);

  ServerOptions options_;
  std::shared_ptr<BearerTokenAuthenticator> authenticator_;
  std::chrono::system_clock::time_point started_at_;  // on the coordinator's clock
  std::unique_ptr<SystemClock> system_clock_;  // the coordinator's clock unless Start was given one
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<UserServiceImpl> user_service_;
  std::unique_ptr<WorkerServiceImpl> worker_service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::unique_ptr<grpc::Server> health_server_;  // only grpc.health.v1.Health, plaintext; may be null
  std::string health_address_;
};

}  // namespace rung::server
