// coordinator/dashboard/dashboard_server.h
//
// `rung dashboard`'s web server (cpp-httplib): the bundled page (web/, built by esbuild into
// dashboard/ beside the executable and read into memory at start), the JSON endpoints of
// dashboard_api.h, and each sweep's live updates as server-sent events
// (GET /api/sweeps/ID/events, sweep_events.h). Every request, the page included, needs the login
// cookie (login_gate.h); without it the answer is 401. Plaintext only on loopback, HTTPS elsewhere
// (dashboard_options.h); --allow-control needs a token the coordinator knows as a user's. With
// --allow-control, a control request (any method but GET/HEAD/OPTIONS) must also come from the page
// itself: Origin (when sent) this server's own scheme://Host, Sec-Fetch-Site (when sent)
// same-origin, and the header X-Rung-Control: 1; else 403 with a JSON error saying which. Every
// connection, plaintext or HTTPS, goes through GuardedServer (connection_guard.h: a deadline for each
// request head, the TLS handshake included, a cap on open connections, threads only for whole
// requests).
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(auto server, DashboardServer::Start(options));
//   std::cout << server->url() << "\n";   // http://127.0.0.1:8050/?token=...
//   server->Wait();                        // until Stop() from another thread
//
// Thread safety: Stop and the accessors from any thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "coordinator/client/coordinator_connection.h"
#include "coordinator/dashboard/dashboard_api.h"
#include "coordinator/dashboard/dashboard_options.h"
#include "coordinator/dashboard/login_gate.h"
#include "core/common/status.h"

namespace httplib {
class Server;
}

namespace rung::dashboard {

class DashboardServer {
 public:
  // Checks the options, reads the page's files, asks the coordinator who the token is, binds and
  // starts serving on a thread of its own. Errors: INVALID_ARGUMENT (options, a port in use),
  // NOT_FOUND (the page's files are missing: the message names the folder and the build target),
  // UNAVAILABLE (the coordinator does not answer), PERMISSION_DENIED (--allow-control without a
  // user token), UNAUTHENTICATED (the token file).
  static StatusOr<std::unique_ptr<DashboardServer>> Start(const DashboardOptions& options);
  ~DashboardServer();

  // Where to open it, with the login token: "http://127.0.0.1:8050/?token=...".
  std::string url() const;
  int port() const { return port_; }
  const LoginGate& gate() const { return gate_; }

  // Blocks until Stop.
  void Wait();
  void Stop();

 private:
  struct WebFile {
    std::string content;
    std::string type;
  };
  explicit DashboardServer(LoginGate gate);  // out of line: httplib::Server is incomplete here
  Status LoadWebFiles(const std::string& folder);
  void Route();

  DashboardOptions options_;
  LoginGate gate_;
  std::unique_ptr<client::CoordinatorConnection> connection_;
  std::unique_ptr<DashboardApi> api_;
  std::unique_ptr<httplib::Server> http_;
  std::map<std::string, WebFile> files_;  // "/app.js" -> its bytes
  std::string host_;
  int port_ = 0;
  std::atomic<int> event_streams_{0};
  std::thread listener_;
};

}  // namespace rung::dashboard
