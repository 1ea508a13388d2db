// coordinator/server/rpc_support.cc
#include "coordinator/server/rpc_support.h"

#include <string>

#include <google/protobuf/util/time_util.h>

#include "core/common/provenance.h"

namespace rung::server {

grpc::Status Unimplemented(std::string_view method) {
  return {grpc::StatusCode::UNIMPLEMENTED,
          std::string(method) + " is not implemented by this coordinator (rung " + BuildCommit() + ") yet"};
}

Status CallGoesOn(const grpc::ServerContext& context, std::string_view what) {
  if (context.deadline() <= std::chrono::system_clock::now()) {
    return Status::DeadlineExceeded(std::string(what) + " stopped: the call's deadline passed");
  }
  if (context.IsCancelled()) {
    return Status::Cancelled(std::string(what) + " stopped: the caller went away or the coordinator is shutting down");
  }
  return Status::Ok();
}

google::protobuf::Timestamp ToTimestamp(std::chrono::system_clock::time_point time) {
  return google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
      std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count());
}

google::protobuf::Duration ToDuration(std::chrono::microseconds duration) {
  return google::protobuf::util::TimeUtil::MicrosecondsToDuration(duration.count());
}

v1::ServerInfo MakeServerInfo(std::chrono::system_clock::time_point started_at, v1::Role caller_role,
                              std::chrono::system_clock::time_point now) {
  v1::ServerInfo info;
  info.set_api_version(v1::ServerInfo::descriptor()->file()->package());
  info.set_build_commit(BuildCommit());
  info.set_caller_role(caller_role);
  *info.mutable_server_time() = ToTimestamp(now);
  *info.mutable_started_at() = ToTimestamp(started_at);
  info.set_protocol_version(wire::kProtocolVersion);
  return info;
}

grpc::Status CheckProtocolVersion(int32_t spoken, const std::string& peer) {
  const int32_t version = spoken == 0 ? 1 : spoken;
  if (version == wire::kProtocolVersion) return grpc::Status::OK;
  return {grpc::StatusCode::FAILED_PRECONDITION,
          peer + " speaks protocol version " + std::to_string(version) + " and this coordinator (rung " +
              BuildCommit() + ") speaks version " + std::to_string(wire::kProtocolVersion) + ": " +
              (version < wire::kProtocolVersion ? "upgrade " + peer + " to this coordinator's release"
                                          : "upgrade the coordinator, or use the " + peer + " of its release")};
}

}  // namespace rung::server
