#include "coordinator/client/coordinator_connection.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "coordinator/client/exit_codes.h"
#include "core/common/token_file.h"
#include "proto/protocol_version.h"

namespace rung::client {
namespace {

constexpr int kMaxAnswerBytes = 512 * 1024 * 1024;

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

StatusOr<std::string> ReadFileTrimmed(const std::string& path, const std::string& what) {
  std::ifstream stream(path);
  if (!stream) return Status::InvalidArgument("cannot read " + what + " " + path);
  std::stringstream text;
  text << stream.rdbuf();
  std::string value = text.str();
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' ')) value.pop_back();
  if (value.empty()) return Status::InvalidArgument(what + " " + path + " is empty");
  return value;
}

}  // namespace

void AddConnectionOptions(CLI::App* command, ConnectionOptions* options) {
  options->address = EnvOr("RUNG_COORDINATOR", "127.0.0.1:50551");
  options->token_file = EnvOr("RUNG_TOKEN_FILE", "");
  command->add_option("--coordinator", options->address, "Coordinator address (default $RUNG_COORDINATOR or 127.0.0.1:50551)")
      ->type_name("HOST:PORT");
  command->add_option("--token-file", options->token_file, "File with the user token (default $RUNG_TOKEN_FILE)")
      ->type_name("FILE");
  command->add_option("--tls-ca", options->tls_ca_file, "PEM root certificates: connect with TLS")->type_name("FILE");
}

StatusOr<std::unique_ptr<CoordinatorConnection>> CoordinatorConnection::Open(const ConnectionOptions& options) {
  if (options.token_file.empty()) {
    return Status::Unauthenticated("no user token: pass --token-file FILE or set RUNG_TOKEN_FILE "
                                   "(the coordinator's --user-token-file)");
  }
  StatusOr<std::string> token = ReadBearerTokenFile(options.token_file);
  if (!token.ok()) return Status::Unauthenticated(token.status().message());
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options.tls_ca_file.empty()) {
    RUNG_ASSIGN_OR_RETURN(const std::string roots, ReadFileTrimmed(options.tls_ca_file, "TLS root certificates"));
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = roots + "\n";
    credentials = grpc::SslCredentials(ssl);
  }
  auto connection = std::unique_ptr<CoordinatorConnection>(new CoordinatorConnection());
  // Answers grow with a sweep (a 100,000-trial submission lists every cell: ~12 MB), past gRPC's
  // 4 MiB default.
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(kMaxAnswerBytes);
  connection->channel_ = grpc::CreateCustomChannel(options.address, credentials, arguments);
  connection->user_ = rung::v1::UserService::NewStub(connection->channel_);
  connection->token_ = std::move(token).value();
  connection->timeout_seconds_ = options.timeout_seconds;
  return connection;
}

std::unique_ptr<grpc::ClientContext> CoordinatorConnection::Context() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token_);
  context->AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds_ * 1000)));
  return context;
}

std::unique_ptr<grpc::ClientContext> CoordinatorConnection::StreamContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token_);
  context->AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
  return context;
}

int ReportConnectionError(const std::string& command, const Status& status, std::ostream& err) {
  err << "rung " << command << ": " << status.message() << "\n";
  return status.code() == StatusCode::kUnauthenticated ? kDenied : kUsage;
}

int ReportRpcError(const std::string& command, const grpc::Status& status) {
  std::cerr << "rung " << command << ": " << status.error_message() << "\n";
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return kUsage;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      std::cerr << "rung " << command << ": is the coordinator running at that address?\n";
      return kUnavailable;
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return kDenied;
    default:
      return kFailure;
  }
}

}  // namespace rung::client
