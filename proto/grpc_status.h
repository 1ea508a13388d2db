// proto/grpc_status.h
//
// rung::Status <-> grpc::Status. The canonical codes share their numbers (core/common/status.h), so
// a Status a coordinator returns reaches the worker or the CLI with the same code and message:
// FromGrpcStatus(ToGrpcStatus(s)) == s for every s.
//
// Thread safety: pure functions.
#pragma once

#include <grpcpp/support/status.h>

#include "core/common/status.h"

namespace rung {

grpc::Status ToGrpcStatus(const Status& status);
Status FromGrpcStatus(const grpc::Status& status);

}  // namespace rung
