// coordinator/server/grpc_server.cc
#include "coordinator/server/grpc_server.h"

#include <filesystem>
#include <iostream>
#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/ext/health_check_service_server_builder_option.h>
#include <grpcpp/impl/server_builder_option.h>

#include "coordinator/server/health_only_service.h"
#include "core/common/artifact_root_marker.h"

namespace rung::server {
namespace {

// Idle request threads the server keeps between bursts of calls (gRPC's default: 2).
constexpr int kMaxIdlePollers = 64;

// Drops the builder's plugins (server reflection, registered process-wide): the health listener
// answers the health service and nothing else, not even the list of the services.
class WithoutPlugins : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* /*arguments*/) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override { plugins->clear(); }
};

// Creates a token file that does not exist yet; an existing one is left as it is.
Status CreateMissingTokenFile(const std::string& path) {
  if (path.empty() || std::filesystem::exists(path)) return Status::Ok();
  RUNG_RETURN_IF_ERROR(WriteFreshTokenFile(path));
  std::cerr << "rung-coordinator: created " << path << " with a fresh token (mode 0600)\n";
  return Status::Ok();
}

}  // namespace

CoordinatorServer::CoordinatorServer(const ServerOptions& options,
                                     std::shared_ptr<BearerTokenAuthenticator> authenticator)
    : options_(options), authenticator_(std::move(authenticator)) {}

StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(const ServerOptions& options,
                                                                      const Clock* clock) {
  RUNG_RETURN_IF_ERROR(ValidateServerOptions(options));
  // The database first: a coordinator that cannot have it (another one holds it, it is damaged)
  // writes nothing, not even token files.
  std::unique_ptr<SystemClock> system_clock = std::make_unique<SystemClock>();
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Coordinator> coordinator,
                        Coordinator::Open({options.database_path, options.artifact_root, options.lease_duration,
                                           options.restart_grace, options.start_check,
                                           options.rendezvous_first_port, options.rendezvous_port_count},
                                          clock != nullptr ? *clock : *system_clock));
  // Then the artifact root's marker (written once, kept after): what workers check they see.
  RUNG_ASSIGN_OR_RETURN(ArtifactRootMarker artifact_root,
                        EnsureArtifactRootMarker(coordinator->store_options().artifact_root));
  if (options.create_missing_token_files) {
    RUNG_RETURN_IF_ERROR(CreateMissingTokenFile(options.user_token_file));
    RUNG_RETURN_IF_ERROR(CreateMissingTokenFile(options.worker_token_file));
    RUNG_RETURN_IF_ERROR(CreateMissingTokenFile(options.viewer_token_file));
  }
  RUNG_ASSIGN_OR_RETURN(std::string user_token, ReadTokenFile(options.user_token_file));
  RUNG_ASSIGN_OR_RETURN(std::string worker_token, ReadTokenFile(options.worker_token_file));
  std::string viewer_token;
  if (!options.viewer_token_file.empty()) {
    RUNG_ASSIGN_OR_RETURN(viewer_token, ReadTokenFile(options.viewer_token_file));
  }
  RUNG_RETURN_IF_ERROR(ValidateTokens(user_token, worker_token, viewer_token));
  RUNG_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials, MakeServerCredentials(options));
  auto authenticator = std::make_shared<BearerTokenAuthenticator>(user_token, worker_token, viewer_token);
  (credentials)->SetAuthMetadataProcessor(authenticator);

  // Both are process-wide switches read by every ServerBuilder built afterwards.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  std::unique_ptr<CoordinatorServer> server(new CoordinatorServer(options, std::move(authenticator)));
  server->system_clock_ = std::move(system_clock);
  server->coordinator_ = std::move(coordinator);
  // On the coordinator's clock, as ServerInfo.server_time is: the two always compare.
  server->started_at_ = std::chrono::system_clock::time_point(server->coordinator_->clock().Now());
  server->user_service_ = std::make_unique<UserServiceImpl>(server->coordinator_.get(), server->authenticator_.get(),
                                                            server->started_at_, options.max_trials_per_submission);
  server->worker_service_ = std::make_unique<WorkerServiceImpl>(server->coordinator_.get(), server->options_,
                                                                server->started_at_, std::move(artifact_root));

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
    // One service, health, and no plugin (no reflection). Plaintext is safe here: no token and no
    // data cross this port.
    grpc::ServerBuilder health_builder;
    health_builder.SetOption(std::make_unique<WithoutPlugins>());
    auto health = std::make_unique<HealthOnlyService>();
    health_builder.RegisterService(health.get());  // owned by the server, through the option below
    health_builder.SetOption(std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(std::move(health)));
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
