// coordinator/dashboard/dashboard_options.h
//
// What `rung dashboard` is told: the coordinator to read (with the token it reads it with), where
// to listen, TLS, whether control buttons are on, and where the bundled page is. CheckListenAddress
// enforces the access rule: plaintext only on loopback; anywhere else only with a TLS certificate
// and key.
#pragma once

#include <chrono>
#include <string>

#include "coordinator/client/coordinator_connection.h"
#include "core/common/status.h"

namespace rung::dashboard {

inline constexpr char kDefaultListen[] = "127.0.0.1:8050";

struct DashboardOptions {
  client::ConnectionOptions connection;
  std::string listen = kDefaultListen;  // HOST:PORT; port 0 picks a free one
  std::string tls_cert_file;            // PEM certificate chain: serve HTTPS
  std::string tls_key_file;             // its PEM private key
  bool allow_control = false;           // pause/resume/cancel/retry endpoints and buttons
  std::string web_root;                 // the bundled page; "": dashboard/ beside the executable
  // Plaintext connections (connection_guard.h): at most this many open at once (more are answered
  // 503 and closed), and each request's head must arrive whole within the deadline (else 408 and
  // closed). Not flags: tests and benchmarks set them.
  int max_connections = 1024;
  std::chrono::milliseconds request_head_deadline{5000};
};

// OK, or INVALID_ARGUMENT saying what to change: a malformed --listen, only one of --tls-cert and
// --tls-key, or a non-loopback --listen without TLS.
Status CheckListenAddress(const DashboardOptions& options);

}  // namespace rung::dashboard
