// coordinator/server/grpc_server.h
//
// The coordinator's gRPC server: rung.v1.UserService and rung.v1.WorkerService behind bearer-token
// authentication, plus the standard health service (grpc.health.v1.Health, SERVING while up) and
// server reflection (grpcurl and friends), both open without a token. Shaped like gRPC's
// route_guide RunServer: build, register, start, wait.
//
// Example:
//   ServerOptions options;
//   options.listen_address = "127.0.0.1:0";
//   options.user_token_file = "user.token";
//   options.worker_token_file = "worker.token";
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
#include "coordinator/server/server_options.h"
#include "coordinator/server/user_service.h"
#include "coordinator/server/in_memory_worker_registry.h"
#include "coordinator/server/worker_service.h"
#include "core/common/status.h"

namespace rung::server {

class CoordinatorServer {
 public:
  // Validates the options, reads both token files, builds the credentials and starts serving.
  // Errors: INVALID_ARGUMENT (options, tokens, TLS files), NOT_FOUND (a token or TLS file is
  // missing), FAILED_PRECONDITION (a token file others can read), UNAVAILABLE (cannot listen on
  // the address: in use, or not an address of this host).
  static StatusOr<std::unique_ptr<CoordinatorServer>> Start(const ServerOptions& options);

  // Shuts down (as Shutdown()) and waits for the server to stop.
  ~CoordinatorServer();
  CoordinatorServer(const CoordinatorServer&) = delete;
  CoordinatorServer& operator=(const CoordinatorServer&) = delete;

  // The address it listens on, with the port it bound: "127.0.0.1:43117" (for --listen
  // 127.0.0.1:0), or the unix: address as given.
  const std::string& address() const { return address_; }
  const ServerOptions& options() const { return options_; }

  // Stops accepting calls, lets calls in flight finish for up to `grace`, then cancels the rest.
  // The health service answers NOT_SERVING from the start of the shutdown.
  void Shutdown(std::chrono::milliseconds grace = std::chrono::seconds(5));

  // Blocks until the server has shut down.
  void Wait();

 private:
  CoordinatorServer(const ServerOptions& options, std::shared_ptr<BearerTokenAuthenticator> authenticator);

  ServerOptions options_;
  std::shared_ptr<BearerTokenAuthenticator> authenticator_;
  std::chrono::system_clock::time_point started_at_;
  InMemoryWorkerRegistry workers_;
  UserServiceImpl user_service_;
  WorkerServiceImpl worker_service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace rung::server
