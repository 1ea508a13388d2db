// tests/coordinator/server/grpc_server_test.cc
//
// A real coordinator server on 127.0.0.1, port 0, called through real gRPC channels: health and
// reflection without a token, bearer-token authentication, the role of each token, the methods
// served so far, TLS with a certificate made on the spot, and the artifact root's marker (written
// once, kept across restarts, told to workers at registration; one that is not valid refused).
#include "coordinator/server/grpc_server.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/server/auth.h"
#include "core/common/artifact_root_marker.h"
#include "proto/protocol_version.h"
#include "proto/rung.grpc.pb.h"
#include "tests/coordinator/server/server_test_util.h"
#include "tests/support/tls/self_signed_certificate.h"

namespace rung::server {
namespace {

using ::rung::testing::PemPair;
using ::rung::testing::SelfSignedLocalhostCertificate;

using ::testing::HasSubstr;
using testing::CheckHealth;
using testing::ContextWithToken;
using testing::LoopbackChannel;

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::LoopbackServerOptions(scratch_, &options_, &user_token_, &worker_token_));
  }

  // Starts the server with options_ and connects to it.
  void StartServer() {
    StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    channel_ = LoopbackChannel(server_->address());
    users_ = v1::UserService::NewStub(channel_);
    workers_ = v1::WorkerService::NewStub(channel_);
  }

  grpc::Status SubmitSweep(const std::string& token) {
    v1::SubmitSweepRequest request;
    request.set_spec_text("name: x\n");
    request.set_spec_file_name("x.yaml");
    v1::SubmitSweepResponse response;
    return users_->SubmitSweep(ContextWithToken(token).get(), request, &response);
  }

  grpc::Status Register(const std::string& token, v1::RegisterResponse* response) {
    v1::RegisterRequest request;
    request.set_worker_id("node7-gpu0");
    request.set_host("node7");
    request.set_cpu_slots(8);
    request.add_gpus()->set_index(0);
    request.set_protocol_version(wire::kProtocolVersion);
    return workers_->Register(ContextWithToken(token).get(), request, response);
  }

  testing::ScratchDir scratch_;
  ServerOptions options_;
  std::string user_token_;
  std::string worker_token_;
  std::unique_ptr<CoordinatorServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::UserService::Stub> users_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
};

TEST_F(GrpcServerTest, PortZeroReportsTheBoundPort) {
  StartServer();
  EXPECT_THAT(server_->address(), ::testing::StartsWith("127.0.0.1:"));
  EXPECT_NE(server_->address(), "127.0.0.1:0");
}

TEST_F(GrpcServerTest, HealthAnswersServingWithoutAToken) {
  StartServer();
  grpc::Status status;
  EXPECT_EQ(CheckHealth(channel_, &status), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(GrpcServerTest, ReflectionListsBothServicesWithoutAToken) {
  StartServer();
  EXPECT_THAT(testing::ReflectedServices(channel_),
              ::testing::IsSupersetOf({"rung.v1.UserService", "rung.v1.WorkerService", "grpc.health.v1.Health"}));
}

TEST_F(GrpcServerTest, UserServiceWithoutATokenIsUnauthenticated) {
  StartServer();
  grpc::Status status = SubmitSweep("");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr("authorization: Bearer <token>"));
  EXPECT_THAT(status.error_message(), HasSubstr("--user-token-file"));

  v1::ListSweepsResponse sweeps;
  status = users_->ListSweeps(ContextWithToken("").get(), v1::ListSweepsRequest(), &sweeps);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(GrpcServerTest, AWrongTokenIsUnauthenticatedAndNotEchoed) {
  StartServer();
  const std::string wrong = "0123456789abcdef0123456789abcdef";
  grpc::Status status = SubmitSweep(wrong);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr("neither the user nor the worker token"));
  EXPECT_THAT(status.error_message(), ::testing::Not(HasSubstr(wrong)));

  v1::RegisterResponse registered;
  EXPECT_EQ(Register(wrong, &registered).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(GrpcServerTest, WorkerTokenCannotSubmitOrReadSweeps) {
  StartServer();
  grpc::Status status = SubmitSweep(worker_token_);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("rung.v1.UserService/SubmitSweep needs the user token"));
  EXPECT_THAT(status.error_message(), HasSubstr("worker token"));

  v1::Sweep sweep;
  v1::CancelSweepRequest cancel;
  EXPECT_EQ(users_->CancelSweep(ContextWithToken(worker_token_).get(), cancel, &sweep).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::ListTrialsResponse trials;
  EXPECT_EQ(users_->ListTrials(ContextWithToken(worker_token_).get(), v1::ListTrialsRequest(), &trials).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(GrpcServerTest, UserTokenCannotCallWorkerService) {
  StartServer();
  v1::RegisterResponse registered;
  grpc::Status status = Register(user_token_, &registered);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("rung.v1.WorkerService/Register needs the worker token"));

  v1::LeaseResponse lease;
  EXPECT_EQ(workers_->Lease(ContextWithToken(user_token_).get(), v1::LeaseRequest(), &lease).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(GrpcServerTest, WorkerTokenRegistersAndUsersSeeTheWorker) {
  StartServer();
  v1::RegisterResponse registered;
  grpc::Status status = Register(worker_token_, &registered);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(registered.worker_id(), "node7-gpu0");
  EXPECT_EQ(registered.heartbeat_interval().seconds(), 10);
  EXPECT_EQ(registered.lease_duration().seconds(), 60);
  EXPECT_EQ(registered.server().caller_role(), v1::ROLE_WORKER);

  // Registering again under the same id updates the worker, not a second one.
  ASSERT_TRUE(Register(worker_token_, &registered).ok());
  v1::ListWorkersResponse listed;
  status = users_->ListWorkers(ContextWithToken(user_token_).get(), v1::ListWorkersRequest(), &listed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(listed.workers_size(), 1);
  EXPECT_EQ(listed.workers(0).host(), "node7");
  EXPECT_EQ(listed.workers(0).cpu_slots(), 8);
}

TEST_F(GrpcServerTest, StartWritesTheArtifactRootMarkerOnceAndRegisterNamesTheRootAndItsId) {
  options_.artifact_root = scratch_.Path("shared/artifacts");  // not there yet: created with its marker
  StartServer();
  StatusOr<ArtifactRootMarker> marker = ReadArtifactRootMarker(options_.artifact_root);
  ASSERT_TRUE(marker.ok()) << marker.status().ToString();
  EXPECT_EQ(marker->id.size(), 32u);
  const std::string written = agent::testing::FileText(ArtifactRootMarkerPath(options_.artifact_root));
  v1::RegisterResponse registered;
  ASSERT_TRUE(Register(worker_token_, &registered).ok());
  EXPECT_EQ(registered.artifact_root(), options_.artifact_root);
  EXPECT_EQ(registered.artifact_root_id(), marker->id);

  // A restart on the same root keeps the marker as it is: the same id, the same bytes.
  server_.reset();
  StartServer();
  ASSERT_TRUE(Register(worker_token_, &registered).ok());
  EXPECT_EQ(registered.artifact_root_id(), marker->id);
  EXPECT_EQ(agent::testing::FileText(ArtifactRootMarkerPath(options_.artifact_root)), written);
}

TEST_F(GrpcServerTest, TheDefaultArtifactRootBesideTheDatabaseGetsAMarkerToo) {
  StartServer();
  const std::string root = (std::filesystem::absolute(options_.database_path).parent_path() / "artifacts").string();
  StatusOr<ArtifactRootMarker> marker = ReadArtifactRootMarker(root);
  ASSERT_TRUE(marker.ok()) << marker.status().ToString();
  v1::RegisterResponse registered;
  ASSERT_TRUE(Register(worker_token_, &registered).ok());
  EXPECT_EQ(registered.artifact_root(), root);
  EXPECT_EQ(registered.artifact_root_id(), marker->id);
}

TEST_F(GrpcServerTest, StartRefusesAnArtifactRootMarkerThatIsNotOneNamingItAndKeepsIt) {
  options_.artifact_root = scratch_.Path("artifacts");
  std::filesystem::create_directories(options_.artifact_root);
  const std::string path = ArtifactRootMarkerPath(options_.artifact_root);
  for (const std::string& garbage : {std::string("garbage\n"), std::string("{\"id\": \"short\", \"created_at\": \"x\"}"),
                                     std::string("{\"id\": \"0123456789abcdef0123456789abcdef\"}")}) {
    SCOPED_TRACE(garbage);
    agent::testing::WriteFile(path, garbage);
    StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_);
    ASSERT_FALSE(server.ok());
    EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(server.status().message(), HasSubstr(path + " is not an artifact root marker: "));
    EXPECT_EQ(agent::testing::FileText(path), garbage) << "never overwritten";
  }
}

TEST_F(GrpcServerTest, StartRefusesAnArtifactRootThatCannotBeAFolder) {
  agent::testing::WriteFile(scratch_.Path("a-file"), "not a folder\n");
  options_.artifact_root = scratch_.Path("a-file/artifacts");
  StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("cannot create the artifact root " + options_.artifact_root));
}

TEST_F(GrpcServerTest, RegisterRejectsAWorkerWithoutResources) {
  StartServer();
  v1::RegisterRequest request;
  request.set_worker_id("idle");
  request.set_host("node1");
  request.set_protocol_version(wire::kProtocolVersion);
  v1::RegisterResponse response;
  grpc::Status status = workers_->Register(ContextWithToken(worker_token_).get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("neither CPU slots nor GPUs"));
}

// Both calls share one channel, hence one connection: the role belongs to the call, not to the
// connection.
TEST_F(GrpcServerTest, ServerInfoAnswersEitherTokenWithItsRole) {
  StartServer();
  v1::ServerInfo info;
  ASSERT_TRUE(users_->GetServerInfo(ContextWithToken(user_token_).get(), v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.caller_role(), v1::ROLE_USER);
  EXPECT_EQ(info.api_version(), "rung.v1");
  EXPECT_FALSE(info.build_commit().empty());
  ASSERT_TRUE(users_->GetServerInfo(ContextWithToken(worker_token_).get(), v1::GetServerInfoRequest(), &info).ok());
  EXPECT_EQ(info.caller_role(), v1::ROLE_WORKER);
}

TEST_F(GrpcServerTest, MethodsNotBuiltYetAnswerUnimplementedToTheRightRole) {
  StartServer();
  v1::ExportRequest request;
  request.set_sweep_id(1);
  request.set_table(v1::EXPORT_TABLE_EVENTS);  // exporting the events table is not built yet
  auto read_status = [&](const std::string& token) {
    std::unique_ptr<grpc::ClientContext> context = ContextWithToken(token);
    std::unique_ptr<grpc::ClientReader<v1::ExportChunk>> stream = users_->Export(context.get(), request);
    v1::ExportChunk chunk;
    while (stream->Read(&chunk)) {
    }
    return stream->Finish();
  };
  grpc::Status status = read_status(user_token_);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(status.error_message(), HasSubstr("rung.v1.UserService/Export of table EXPORT_TABLE_EVENTS"));
  // The worker token reaches the user service only for GetServerInfo.
  EXPECT_EQ(read_status(worker_token_).error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(GrpcServerTest, StartRequiresADatabase) {
  options_.database_path.clear();
  StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("--db is required"));
}

TEST_F(GrpcServerTest, StartRefusesTheSameTokenForBothRoles) {
  options_.worker_token_file = options_.user_token_file;
  StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("the same"));
}

TEST_F(GrpcServerTest, StartReportsAMissingTokenFile) {
  options_.user_token_file = scratch_.Path("absent.token");
  StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(server.status().message(), HasSubstr("absent.token"));
}

TEST_F(GrpcServerTest, StartReportsAnAddressInUse) {
  StartServer();
  ServerOptions second = options_;
  second.listen_address = server_->address();
  second.database_path = scratch_.Path("second.db");  // the first one's is locked
  StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(second);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kUnavailable);
}


void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST_F(GrpcServerTest, ServesTlsWithTokensAsCallCredentials) {
  const PemPair pem = SelfSignedLocalhostCertificate();
  options_.tls_cert_file = scratch_.Path("cert.pem");
  options_.tls_key_file = scratch_.Path("key.pem");
  WriteFile(options_.tls_cert_file, pem.certificate);
  WriteFile(options_.tls_key_file, pem.key);
  StartServer();

  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = pem.certificate;
  const std::string localhost = "localhost:" + server_->address().substr(server_->address().rfind(':') + 1);
  // Over TLS a client can hand the token to gRPC as call credentials instead of raw metadata.
  auto channel = grpc::CreateChannel(
      localhost, grpc::CompositeChannelCredentials(grpc::SslCredentials(ssl), grpc::AccessTokenCredentials(user_token_)));
  v1::ServerInfo info;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status status = v1::UserService::NewStub(channel)->GetServerInfo(&context, v1::GetServerInfoRequest(), &info);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(info.caller_role(), v1::ROLE_USER);

  // A plaintext client gets nowhere.
  grpc::Status health;
  CheckHealth(LoopbackChannel(server_->address()), &health);
  EXPECT_EQ(health.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(GrpcServerTest, StartRejectsAKeyOfAnotherCertificate) {
  const PemPair first = SelfSignedLocalhostCertificate();
  const PemPair second = SelfSignedLocalhostCertificate();
  options_.tls_cert_file = scratch_.Path("cert.pem");
  options_.tls_key_file = scratch_.Path("key.pem");
  WriteFile(options_.tls_cert_file, first.certificate);
  WriteFile(options_.tls_key_file, second.key);
  StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("is not the key of the certificate"));
}

// Kubernetes' grpc probes dial in plaintext: next to a TLS server, the health-only listener must
// answer them, and must serve nothing but health (no token is checked there).
TEST_F(GrpcServerTest, HealthListenerAnswersPlaintextBesideTlsAndServesNothingElse) {
  const PemPair pem = SelfSignedLocalhostCertificate();
  options_.tls_cert_file = scratch_.Path("cert.pem");
  options_.tls_key_file = scratch_.Path("key.pem");
  WriteFile(options_.tls_cert_file, pem.certificate);
  WriteFile(options_.tls_key_file, pem.key);
  options_.health_listen_address = "127.0.0.1:0";
  StartServer();
  ASSERT_THAT(server_->health_address(), ::testing::StartsWith("127.0.0.1:"));
  ASSERT_NE(server_->health_address(), server_->address());

  const std::shared_ptr<grpc::Channel> health_channel = LoopbackChannel(server_->health_address());
  grpc::Status health;
  EXPECT_EQ(CheckHealth(health_channel, &health), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_TRUE(health.ok()) << health.error_message();

  v1::ServerInfo info;
  grpc::Status status = v1::UserService::NewStub(health_channel)
                            ->GetServerInfo(ContextWithToken(user_token_).get(), v1::GetServerInfoRequest(), &info);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  grpc::Status reflection;
  EXPECT_THAT(testing::ReflectedServices(health_channel, &reflection), ::testing::IsEmpty());
  EXPECT_EQ(reflection.error_code(), grpc::StatusCode::UNIMPLEMENTED) << "the health listener serves no reflection";

  server_->Shutdown();
  CheckHealth(health_channel, &health);
  EXPECT_FALSE(health.ok());
}

TEST_F(GrpcServerTest, StartRejectsAHealthAddressWithoutAPort) {
  options_.health_listen_address = "0.0.0.0";
  StatusOr<std::unique_ptr<CoordinatorServer>> server = CoordinatorServer::Start(options_);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("--health-listen"));
}

}  // namespace
}  // namespace rung::server
