// proto/protocol_version.h
//
// The protocol version of the wire contract this build speaks (proto/rung.proto, "Compatibility"):
// the coordinator answers a peer of another version with FAILED_PRECONDITION naming both; workers
// send it in RegisterRequest.protocol_version, clients in GetServerInfoRequest.protocol_version.
#pragma once

#include <cstdint>

namespace rung::wire {

// 2: typed trainer records, each fact once (MetricBatch), leases with typed steps and world size.
inline constexpr int32_t kProtocolVersion = 2;

// The metadata a UserService client sends its version in on every call (GetServerInfo takes it in
// its request too); absent means 1.
inline constexpr char kProtocolVersionMetadata[] = "rung-protocol-version";

}  // namespace rung::wire
