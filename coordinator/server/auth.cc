// coordinator/server/auth.cc
#include "coordinator/server/auth.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <google/protobuf/descriptor.h>
#include <openssl/crypto.h>

#include "coordinator/server/rpc_support.h"
#include "core/common/fresh_token.h"
#include "core/common/sha256.h"
#include "core/common/token_file.h"
#include "core/common/trim_whitespace.h"
#include "proto/protocol_version.h"
#include "proto/rung.grpc.pb.h"

namespace rung::server {
namespace {

constexpr char kAuthorizationKey[] = "authorization";

std::string ServicePrefix(const char* service_full_name) {
  return std::string("/") + service_full_name + "/";
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The method path without its leading '/', for messages: "rung.v1.UserService/SubmitSweep".
std::string_view MethodName(std::string_view method_path) {
  return StartsWith(method_path, "/") ? method_path.substr(1) : method_path;
}

const char* RoleName(v1::Role role) {
  switch (role) {
    case v1::ROLE_USER: return "user";
    case v1::ROLE_WORKER: return "worker";
    case v1::ROLE_VIEWER: return "viewer";
    default: return "none";
  }
}

// The token of "Bearer <token>" (scheme case-insensitive, RFC 7235), or nullopt.
std::optional<std::string_view> ParseBearer(std::string_view header) {
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view token = TrimWhitespace(header.substr(kScheme.size()));
  if (token.empty()) return std::nullopt;
  return token;
}

bool DigestsEqual(const std::string& a, const std::string& b) {
  // Hex SHA-256 digests always have the same length; the comparison takes the same time whatever
  // the contents.
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

bool IsViewerMethod(std::string_view method_name) {
  // Queries only, as the proto marks them (the read_only method option): nothing they do changes a
  // sweep, a trial or a worker. Fit stores the fit it computed (with its inputs), which changes no
  // sweep or trial.
  static const google::protobuf::ServiceDescriptor* const service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(v1::UserService::service_full_name());
  const google::protobuf::MethodDescriptor* method =
      service == nullptr ? nullptr : service->FindMethodByName(std::string(method_name));
  return method != nullptr && method->options().GetExtension(v1::read_only);
}

Access RequiredAccess(std::string_view method_path) {
  static const std::string kHealth = ServicePrefix("grpc.health.v1.Health");
  static const std::string kReflectionV1Alpha = ServicePrefix("grpc.reflection.v1alpha.ServerReflection");
  static const std::string kReflectionV1 = ServicePrefix("grpc.reflection.v1.ServerReflection");
  static const std::string kUserService = ServicePrefix(v1::UserService::service_full_name());
  static const std::string kWorkerService = ServicePrefix(v1::WorkerService::service_full_name());
  static const std::string kServerInfo = kUserService + "GetServerInfo";

  if (StartsWith(method_path, kHealth) || StartsWith(method_path, kReflectionV1Alpha) ||
      StartsWith(method_path, kReflectionV1)) {
    return Access::kPublic;
  }
  if (method_path == kServerInfo) return Access::kAnyRole;
  if (StartsWith(method_path, kUserService)) {
    return IsViewerMethod(method_path.substr(kUserService.size())) ? Access::kQuery : Access::kUser;
  }
  if (StartsWith(method_path, kWorkerService)) return Access::kWorker;
  return Access::kAnyRole;
}

BearerTokenAuthenticator::BearerTokenAuthenticator(std::string_view user_token, std::string_view worker_token,
                                                   std::string_view viewer_token)
    : user_digest_(Sha256Hex(user_token)),
      worker_digest_(Sha256Hex(worker_token)),
      viewer_digest_(viewer_token.empty() ? std::string() : Sha256Hex(viewer_token)) {}

grpc::Status BearerTokenAuthenticator::Authorize(std::string_view method_path,
                                                 std::optional<std::string_view> authorization,
                                                 v1::Role* role) const {
  *role = v1::ROLE_UNSPECIFIED;
  const Access access = RequiredAccess(method_path);
  if (access == Access::kPublic) return grpc::Status::OK;

  const std::string method(MethodName(method_path));
  if (!authorization.has_value()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        method + " needs a bearer token: send the metadata 'authorization: Bearer <token>' "
                        "with the user token (rung) or the worker token (rung-worker) of this coordinator "
                        "(the files given to rung-coordinator as --user-token-file / --worker-token-file)");
  }
  if (!ParseBearer(*authorization).has_value()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        method + ": the authorization metadata is not of the form 'Bearer <token>'");
  }
  *role = RoleOf(authorization);
  if (*role == v1::ROLE_UNSPECIFIED) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        method + ": the bearer token is neither the user nor the worker token of this "
                        "coordinator; use the token from the coordinator's --user-token-file (rung) or "
                        "--worker-token-file (rung-worker), which change when the file is rewritten");
  }
  const bool allowed = access == Access::kAnyRole || (access == Access::kUser && *role == v1::ROLE_USER) ||
                       (access == Access::kQuery && (*role == v1::ROLE_USER || *role == v1::ROLE_VIEWER)) ||
                       (access == Access::kWorker && *role == v1::ROLE_WORKER);
  if (!allowed && *role == v1::ROLE_VIEWER && access != Access::kWorker) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        method + " changes the coordinator's state and needs the user token; this call was made "
                        "with the viewer token, which may only query (sweeps, trials, curves, results, logs). Use "
                        "the file given to rung-coordinator as --user-token-file");
  }
  if (!allowed) {
    const char* needed = access == Access::kUser ? "user" : access == Access::kQuery ? "user (or viewer)" : "worker";
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        method + " needs the " + needed + " token; this call was made with the " +
                        RoleName(*role) + " token");
  }
  return grpc::Status::OK;
}

v1::Role BearerTokenAuthenticator::RoleOf(std::optional<std::string_view> authorization) const {
  const std::optional<std::string_view> token =
      authorization.has_value() ? ParseBearer(*authorization) : std::nullopt;
  if (!token.has_value()) return v1::ROLE_UNSPECIFIED;
  // Both comparisons always run, so the time taken does not tell which role a token nearly has.
  const std::string digest = Sha256Hex(*token);
  const bool is_user = DigestsEqual(digest, user_digest_);
  const bool is_worker = DigestsEqual(digest, worker_digest_);
  const bool is_viewer = DigestsEqual(digest, viewer_digest_);  // never equal to "" (no viewer token)
  if (is_user) return v1::ROLE_USER;
  if (is_worker) return v1::ROLE_WORKER;
  if (is_viewer) return v1::ROLE_VIEWER;
  return v1::ROLE_UNSPECIFIED;
}

v1::Role BearerTokenAuthenticator::CallerRole(const grpc::ServerContextBase& context) const {
  const auto& metadata = context.client_metadata();
  auto header = metadata.find(kAuthorizationKey);
  if (header == metadata.end()) return v1::ROLE_UNSPECIFIED;
  return RoleOf(std::string_view(header->second.data(), header->second.size()));
}

grpc::Status BearerTokenAuthenticator::Process(const InputMetadata& auth_metadata, grpc::AuthContext* /*context*/,
                                               OutputMetadata* /*consumed_auth_metadata*/,
                                               OutputMetadata* /*response_metadata*/) {
  std::string_view method_path;
  if (auto path = auth_metadata.find(":path"); path != auth_metadata.end()) {
    method_path = std::string_view(path->second.data(), path->second.size());
  }
  std::optional<std::string_view> authorization;
  if (auto header = auth_metadata.find(kAuthorizationKey); header != auth_metadata.end()) {
    authorization = std::string_view(header->second.data(), header->second.size());
  }
  v1::Role role = v1::ROLE_UNSPECIFIED;
  grpc::Status authorized = Authorize(method_path, authorization, &role);
  const Access access = RequiredAccess(method_path);
  if (!authorized.ok() || (access != Access::kUser && access != Access::kQuery)) return authorized;
  // A user call says the protocol it speaks (workers say it when they register).
  int32_t spoken = 1;
  if (auto header = auth_metadata.find(wire::kProtocolVersionMetadata); header != auth_metadata.end()) {
    const std::string text(header->second.data(), header->second.size());
    char* end = nullptr;
    const long value = std::strtol(text.c_str(), &end, 10);
    spoken = end != text.c_str() && *end == '\0' && value > 0 && value < 1000000 ? static_cast<int32_t>(value) : -1;
  }
  if (spoken < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        std::string("the metadata '") + wire::kProtocolVersionMetadata + "' must be a positive integer");
  }
  return CheckProtocolVersion(spoken, "this rung client");
}

Status ValidateTokens(std::string_view user_token, std::string_view worker_token, std::string_view viewer_token) {
  if (user_token.empty() || worker_token.empty()) return Status::InvalidArgument("a token is empty");
  if (user_token == worker_token) {
    return Status::InvalidArgument(
        "the user and the worker token are the same: a worker could act as a user; give each role its own "
        "token file");
  }
  if (!viewer_token.empty() && (viewer_token == user_token || viewer_token == worker_token)) {
    return Status::InvalidArgument(
        std::string("the viewer token is the same as the ") + (viewer_token == user_token ? "user" : "worker") +
        " token: a viewer could act as one; give each role its own token file");
  }
  return Status::Ok();
}

StatusOr<std::string> ReadTokenFile(const std::string& path) { return ReadBearerTokenFile(path); }

StatusOr<std::string> WriteFreshTokenFile(const std::string& path) {
  RUNG_ASSIGN_OR_RETURN(const std::string token, FreshHexToken());

  const std::filesystem::path target(path);
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
  std::string temporary = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temporary.data());  // mode 0600
  if (fd < 0) return Status::Unavailable("cannot write a token file in " + folder.string() + ": " + ErrnoText());
  const std::string line = token + "\n";
  bool written = ::fchmod(fd, 0600) == 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                 ::fsync(fd) == 0;
  written = (::close(fd) == 0) && written;
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = ErrnoText();
    ::unlink(temporary.c_str());
    return Status::Unavailable("cannot write token file " + path + ": " + reason);
  }
  return token;
}

}  // namespace rung::server
