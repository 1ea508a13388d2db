// core/common/network_address.cc
#include "core/common/network_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace rung {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

}  // namespace

bool IsUnixAddress(std::string_view address) {
  return StartsWith(address, "unix:") || StartsWith(address, "unix-abstract:");
}

std::optional<HostPort> SplitHostPort(std::string_view address) {
  std::string_view host;
  std::string_view port;
  if (StartsWith(address, "[")) {
    const size_t close = address.find(']');
    if (close == std::string_view::npos || address.substr(close + 1, 1) != ":") return std::nullopt;
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return std::nullopt;  // a v6 address needs brackets
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
      std::stoi(std::string(port)) > 65535) {
    return std::nullopt;
  }
  return HostPort{std::string(host), std::string(port)};
}

bool IsLoopbackAddress(std::string_view address) {
  if (IsUnixAddress(address)) return true;
  const std::optional<HostPort> split = SplitHostPort(address);
  if (!split.has_value()) return false;
  if (split->host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, split->host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, split->host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace rung
