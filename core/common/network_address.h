// core/common/network_address.h
//
// gRPC target and listen addresses as rung's binaries take them: "host:port", "[v6 host]:port",
// "unix:path" (and "unix-abstract:name"); and which of them stay on this machine, where plaintext
// (a bearer token in the clear) is acceptable.
//
// Example:
//   IsLoopbackAddress("127.0.0.1:50551")  // true
//   IsLoopbackAddress("node7:50551")      // false: TLS required
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rung {

bool IsUnixAddress(std::string_view address);

struct HostPort {
  std::string host;
  std::string port;
};

// "host:port" or "[v6]:port" -> host and port; nullopt when malformed (no port, a port that is not
// a number up to 65535, a v6 address without brackets).
std::optional<HostPort> SplitHostPort(std::string_view address);

// True for unix: addresses and for hosts that are loopback: "localhost", 127.0.0.0/8, "[::1]".
bool IsLoopbackAddress(std::string_view address);

}  // namespace rung
