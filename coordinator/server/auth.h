// coordinator/server/auth.h
//
// Bearer-token authentication and role-based authorization of every coordinator call, and the
// token files the tokens live in.
//
// There are two tokens, and an optional third. The user token (the `rung` command line) may call
// UserService; the worker token (`rung-worker` agents) may call WorkerService and
// UserService.GetServerInfo; the viewer token (dashboards, people who should only look) may call
// UserService's queries (IsViewerMethod: the methods proto/rung.proto marks `read_only`; a method
// without the option, one that changes a sweep, a trial or a worker, needs the user token). The
// standard health service and server reflection need no token. Every other call needs the metadata
// `authorization: Bearer <token>`:
//   no or malformed header, unknown token  -> UNAUTHENTICATED
//   a valid token of the wrong role        -> PERMISSION_DENIED
// Messages say what to fix and never echo a token. Tokens are compared in constant time (the
// SHA-256 digests of the presented and the known tokens, with CRYPTO_memcmp). A service that needs
// the caller's role asks CallerRole. (Not the AuthContext: gRPC 1.51 hands the processor the
// connection's AuthContext, shared by every call on the connection, so a per-call role cannot live
// there.) The authorization header therefore stays in the call's metadata: never log it.
//
// BearerTokenAuthenticator is a grpc::AuthMetadataProcessor, so it runs before any service code
// and covers every method, present and future; it therefore needs secure server credentials (TLS,
// or local credentials on loopback; see server_options.h).
//
// Example:
//   auto user = ReadTokenFile("/etc/rung/user.token");      // StatusOr<std::string>
//   auto worker = ReadTokenFile("/etc/rung/worker.token");
//   auto authenticator = std::make_shared<BearerTokenAuthenticator>(*user, *worker);
//   credentials->SetAuthMetadataProcessor(authenticator);
//
// Thread safety: BearerTokenAuthenticator is immutable after construction; the functions are
// reentrant.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <grpcpp/security/auth_context.h>
#include <grpcpp/security/auth_metadata_processor.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include "core/common/status.h"
#include "proto/rung.pb.h"

namespace rung::server {

// Who may call a method.
enum class Access {
  kPublic,   // no token: health, reflection
  kAnyRole,  // either token
  kUser,     // the user token: UserService's methods that change something
  kQuery,    // the user or the viewer token: UserService's queries
  kWorker,   // the worker token
};

// Whether a UserService method (its name alone: "GetCurves") is one the viewer token may call.
bool IsViewerMethod(std::string_view method_name);

// The access a full method path ("/rung.v1.UserService/SubmitSweep") needs. Methods of other
// services need a token of either role (and then answer UNIMPLEMENTED).
Access RequiredAccess(std::string_view method_path);

// Checks the `authorization: Bearer <token>` metadata of every call against the user and worker
// tokens, and the token's role against RequiredAccess of the called method.
class BearerTokenAuthenticator final : public grpc::AuthMetadataProcessor {
 public:
  // REQUIRES: the tokens non-empty and different (ValidateTokens); `viewer_token` "" = no viewer role.
  BearerTokenAuthenticator(std::string_view user_token, std::string_view worker_token,
                           std::string_view viewer_token = {});

  // The decision for one call: OK, or UNAUTHENTICATED / PERMISSION_DENIED with an actionable
  // message. `authorization` is the header's value, or nullopt when the call has none. On OK,
  // `role` is the token's role (ROLE_UNSPECIFIED for a public method called without a token).
  grpc::Status Authorize(std::string_view method_path, std::optional<std::string_view> authorization,
                         v1::Role* role) const;

  // The role of an authorization header's token: ROLE_USER, ROLE_WORKER, ROLE_VIEWER, or
  // ROLE_UNSPECIFIED for a missing, malformed or unknown one.
  v1::Role RoleOf(std::optional<std::string_view> authorization) const;

  // The role of the token a call was made with (RoleOf its authorization metadata).
  v1::Role CallerRole(const grpc::ServerContextBase& context) const;

  // grpc::AuthMetadataProcessor: runs Authorize on the call's ":path" and "authorization" metadata.
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata, OutputMetadata* response_metadata) override;

 private:
  std::string user_digest_;    // hex SHA-256 of the user token
  std::string worker_digest_;  // hex SHA-256 of the worker token
  std::string viewer_digest_;  // hex SHA-256 of the viewer token; "" without one
};

// INVALID_ARGUMENT when a token is empty or two are the same (a worker or a viewer could then act
// as a user). `viewer_token` "" = no viewer token, which is fine.
Status ValidateTokens(std::string_view user_token, std::string_view worker_token,
                      std::string_view viewer_token = {});

// Reads a token from a file only its owner may read or write, without surrounding whitespace.
// Errors: NOT_FOUND (no such file), FAILED_PRECONDITION (group or others have access: the message
// says `chmod 600`), INVALID_ARGUMENT (empty, shorter than 16 characters, or characters outside
// the bearer-token alphabet [A-Za-z0-9-._~+/=]).
StatusOr<std::string> ReadTokenFile(const std::string& path);

// Writes a fresh token (32 bytes from OpenSSL's CSPRNG, as 64 hex characters) to `path` with mode
// 0600, replacing any file there atomically (a temporary file in the same folder, renamed), and
// returns it. Errors: UNAVAILABLE when the folder cannot be written, INTERNAL without randomness.
StatusOr<std::string> WriteFreshTokenFile(const std::string& path);

}  // namespace rung::server
