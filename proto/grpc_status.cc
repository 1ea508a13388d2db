// proto/grpc_status.cc
#include "proto/grpc_status.h"

namespace rung {

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return {static_cast<grpc::StatusCode>(static_cast<int>(status.code())), status.message()};
}

Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return Status::Ok();
  const StatusCode code = StatusCodeFromInt(static_cast<int>(status.error_code()));
  // A non-OK gRPC status always stays non-OK.
  return Status(code == StatusCode::kOk ? StatusCode::kUnknown : code, status.error_message());
}

}  // namespace rung
