// coordinator/server/rpc_support.h
//
// Small conversions the services share (rung::Status to grpc::Status is proto/grpc_status.h): times to protobuf's
// Timestamp and Duration, the UNIMPLEMENTED answer of methods not built yet, whether a call is still
// wanted, and the ServerInfo a coordinator reports about itself.
//
// Example:
//   StatusOr<v1::Worker> worker = registry->Register(*request, std::chrono::system_clock::now());
//   if (!worker.ok()) return ToGrpcStatus(worker.status());  // proto/grpc_status.h
//
// Thread safety: reentrant functions.
#pragma once

#include <chrono>
#include <string_view>

#include <google/protobuf/duration.pb.h>
#include <google/protobuf/timestamp.pb.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include "core/common/status.h"
#include "proto/grpc_status.h"
#include "proto/protocol_version.h"
#include "proto/rung.pb.h"

namespace rung::server {

// UNIMPLEMENTED, naming the method ("rung.v1.UserService/ListSweeps") as not served yet by this
// coordinator build.
grpc::Status Unimplemented(std::string_view method);

// For long computations to ask as they go (what keep_going options take): OK while the call is
// wanted; DEADLINE_EXCEEDED once its deadline passed, CANCELLED once its caller went away or the
// server is shutting down. `what` names the computation in the message ("the fit").
Status CallGoesOn(const grpc::ServerContext& context, std::string_view what);

google::protobuf::Timestamp ToTimestamp(std::chrono::system_clock::time_point time);
google::protobuf::Duration ToDuration(std::chrono::microseconds duration);

// This coordinator as it describes itself to a caller of the given role; `now` is its clock's time
// (the store's clock, a ManualClock in tests), the server_time that callers compute elapsed times
// and ETAs against.
v1::ServerInfo MakeServerInfo(std::chrono::system_clock::time_point started_at, v1::Role caller_role,
                              std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// OK when a peer's protocol version (0: it named none, so 1) is this coordinator's; otherwise
// FAILED_PRECONDITION naming both versions and what to upgrade. `peer`: "rung-worker", "rung".
grpc::Status CheckProtocolVersion(int32_t spoken, const std::string& peer);

}  // namespace rung::server
