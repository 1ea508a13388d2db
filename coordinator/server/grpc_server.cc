// coordinator/server/grpc_server.cc
#include "coordinator/server/grpc_server.h"

#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

namespace rung::server {
namespace {

// Idle request threads the server keeps between bursts of calls (gRPC's default: 2).
constexpr int kMaxIdlePollers = 64;

}  // namespace

CoordinatorServer::CoordinatorServer(const ServerOptions& options,
                                     std::shared_ptr<BearerTokenAuthenticator> authenticator)
    : options_(options), authenticator_(std::move(authenticator)), started_at_(std::chrono::system_clock::now()) {}

StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(const ServerOptions& options,
                                                                      const Clock* clock) {
  RUNG_RETURN_IF_ERROR(ValidateServerOptions(options));
  RUNG_ASSIGN_OR_RETURN(std::string user_token, ReadTokenFile(options.user_token_file));
  RUNG_ASSIGN_OR_RETURN(std::string worker_token, ReadTokenFile(options.worker_token_file));
  RUNG_RETURN_IF_ERROR(ValidateTokens(user_token, worker_token));
  RUNG_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials, MakeServerCredentials(options));
  auto authenticator = std::make_shared<BearerTokenAuthenticator>(user_token, worker_token);
  (credentials)->SetAuthMetadataProcessor(authenticator);

  // Both are process-wide switches read by every ServerBuilder built afterwards.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  std::unique_ptr<CoordinatorServer> server(new CoordinatorServer(options, std::move(authenticator)));
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Coordinator> coordinator,
                        Coordinator::Open({options.database_path, options.artifact_root, options.lease_duration,
                                           options.rendezvous_first_port, options.rendezvous_port_count},
                                          clock != nullptr ? *clock : server->system_clock_));
  server->coordinator_ = std::move(coordinator);
  server->user_service_ = std::make_unique<UserServiceImpl>(server->coordinator_.get(), server->authenticator_.get(),
                                                            server->started_at_, options.max_trials_per_submission);
  server->worker_service_ =
      std::make_unique<WorkerServiceImpl>(server->coordinator_.get(), server->options_, server->started_at_);

  grpc::ServerBuilder builder;
  int port = 0;
  // A second coordinator on a port in use must fail, not share the port (and the work) with the first.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(options.listen_address, credentials, &port);
  builder.RegisterService(server->user_service_.get());
  builder.RegisterService(server->worker_service_.get());
  // The sync server keeps at most MAX_POLLERS idle threads and ends the rest after each burst (the
  // default is 2): with many workers calling at once, that is a thread created and destroyed for
  // most calls. Idle pollers cost nothing but a wait.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, kMaxIdlePollers);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || port == 0) {
    return Status::Unavailable("cannot listen on " + options.listen_address +
                               ": the port is in use, or the host is not an address of this machine");
  }
  server->address_ = BoundAddress(options.listen_address, port);

  if (!options.health_listen_address.empty()) {
    // No service registered: the builder adds only the default health service (and reflection,
    // which then lists only that). Plaintext is safe here: no token and no data cross this port.
    grpc::ServerBuilder health_builder;
    int health_port = 0;
    health_builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    health_builder.AddListeningPort(options.health_listen_address, grpc::InsecureServerCredentials(), &health_port);
    server->health_server_ = health_builder.BuildAndStart();
    if (server->health_server_ == nullptr || health_port == 0) {
      return Status::Unavailable("cannot listen on --health-listen " + options.health_listen_address +
                                 ": the port is in use, or the host is not an address of this machine");
    }
    server->health_address_ = BoundAddress(options.health_listen_address, health_port);
  }
  return server;
}

CoordinatorServer::~CoordinatorServer() {
  Shutdown();
  Wait();
}

void CoordinatorServer::Shutdown(std::chrono::milliseconds grace) {
  if (coordinator_ != nullptr) coordinator_->Shutdown();  // long-polls answer at once
  if (health_server_ != nullptr) {
    health_server_->GetHealthCheckService()->Shutdown();
    health_server_->Shutdown(std::chrono::system_clock::now());
  }
  if (server_ == nullptr) return;
  server_->GetHealthCheckService()->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() + grace);
}

void CoordinatorServer::Wait() {
  if (health_server_ != nullptr) health_server_->Wait();
  if (server_ != nullptr) server_->Wait();
}

}  // namespace rung::server
