// proto/protocol_version.h
//
// The protocol version of the wire contract this build speaks (proto/rung.proto, "Compatibility"):
// the coordinator answers a peer of another version with FAILED_PRECONDITION naming both; workers
// send it in RegisterRequest.protocol_version, clients in the metadata below.
#pragma once

#include <cstdint>

namespace rung::wire {

// 4: typed diagnostics (DiagnosticsRecord and TrialDiagnostic hold their measurement as messages).
// 3: typed payloads (ConfigValue, ConfigObject, ProvenanceRecord) in place of JSON text.
// 2: typed trainer records, each fact once (MetricBatch), leases with typed steps and world size.
inline constexpr int32_t kProtocolVersion = 4;

// The metadata a UserService client sends its version in on every call; absent means 1.
// GetServerInfo answers every version.
inline constexpr char kProtocolVersionMetadata[] = "rung-protocol-version";

}  // namespace rung::wire
