// coordinator/client/coordinator_connection.h
//
// How a client of the coordinator (the `rung` commands, `rung dashboard`) reaches it: address, user
// token and optional TLS, and the mapping of gRPC statuses to `rung`'s exit codes.
//
//   --coordinator HOST:PORT   (default $RUNG_COORDINATOR, else 127.0.0.1:50551)
//   --token-file FILE         the user token (default $RUNG_TOKEN_FILE)
//   --tls-ca FILE             PEM roots: connect with TLS
//
// The channel is plaintext unless --tls-ca is given (the coordinator only accepts plaintext on
// loopback and unix sockets). Every call carries `authorization: Bearer <token>`.
#pragma once

#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "core/common/status.h"
#include "proto/rung.grpc.pb.h"

namespace rung::client {

struct ConnectionOptions {
  std::string address;
  std::string token_file;
  std::string tls_ca_file;
  double timeout_seconds = 30;
};

// Registers --coordinator, --token-file, --tls-ca on a subcommand.
void AddConnectionOptions(CLI::App* command, ConnectionOptions* options);

class CoordinatorConnection {
 public:
  // Errors, each saying what to do: UNAUTHENTICATED without a token file or for one that is missing
  // or unreadable (ReadBearerTokenFile's message, core/common/token_file.h); INVALID_ARGUMENT for an
  // unreadable or empty --tls-ca file.
  static StatusOr<std::unique_ptr<CoordinatorConnection>> Open(const ConnectionOptions& options);

  rung::v1::UserService::Stub& user() { return *user_; }
  // A context with the bearer token and the deadline, for one call.
  std::unique_ptr<grpc::ClientContext> Context() const;
  // A context with the bearer token and no deadline, for a stream that follows until the server
  // ends it (rung logs --follow).
  std::unique_ptr<grpc::ClientContext> StreamContext() const;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<rung::v1::UserService::Stub> user_;
  std::string token_;
  double timeout_seconds_ = 30;
};

// Prints "rung <command>: <message>" for a failed call and returns its exit code:
// INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, OUT_OF_RANGE -> kUsage; UNAVAILABLE,
// DEADLINE_EXCEEDED -> kUnavailable; UNAUTHENTICATED, PERMISSION_DENIED -> kDenied; else kFailure.
int ReportRpcError(const std::string& command, const grpc::Status& status);

// Prints "rung <command>: <message>" for a connection that could not be opened (Open's errors) and
// returns its exit code: kDenied for a token problem, kUsage for the rest.
int ReportConnectionError(const std::string& command, const Status& status, std::ostream& err = std::cerr);

}  // namespace rung::client
