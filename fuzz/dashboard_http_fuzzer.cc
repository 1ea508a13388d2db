// fuzz/dashboard_http_fuzzer.cc
//
// libFuzzer target: `rung dashboard`'s HTTP request handling (coordinator/dashboard/): the input is
// written as it is, as the bytes of one connection, to a real DashboardServer on 127.0.0.1, which
// parses it (cpp-httplib), checks the login, routes it and calls the real coordinator through its
// gRPC API (an in-process CoordinatorServer over a SQLite file holding one small sweep, no workers).
// When the first byte is odd, the valid login cookie is spliced in as the request's first header
// (after the first "\r\n"), so that the routing and the endpoints behind the login are reached too.
// The response is read until the server closes the connection or 5 s pass; what is checked is that
// nothing crashes, that every response starts with a status line, and that the server still answers
// a plain logged-in request afterwards.
//
// State, once per process: a scratch folder (under /dev/shm when there is one), the coordinator,
// the sweep, the dashboard and its web root (a one-line index.html: the bundle is not needed to
// reach every path). Inputs may change the sweep only through control endpoints, which are off.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "coordinator/dashboard/dashboard_server.h"
#include "coordinator/dashboard/login_gate.h"
#include "coordinator/server/auth.h"
#include "coordinator/server/grpc_server.h"
#include "proto/protocol_version.h"

namespace rung::fuzz {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "dashboard_http_fuzzer: %s\n", message.c_str());
  std::abort();
}

constexpr char kSpec[] = R"(name: fuzz-dashboard
metric: {name: val_loss, goal: minimize}
baseline: {position.variant: rope}
data: {source: builtin, seq_len: 16}
train: {batch_size: 2, steps: 10, lr: 1.0e-3}
ladder:
  rungs:
    - {layers: 1, d_model: 16, heads: 2}
sweep:
  position.variant: [rope, lerope]
)";

struct State {
  std::string scratch;
  std::unique_ptr<server::CoordinatorServer> coordinator;
  std::unique_ptr<dashboard::DashboardServer> dashboard;
};

State& Shared() {
  static State* state = [] {
    auto made = new State();
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    made->scratch = (base / ("rung-dashboard-fuzz-" + std::to_string(::getpid()))).string();
    fs::remove_all(made->scratch);
    fs::create_directories(made->scratch + "/web");
    std::ofstream(made->scratch + "/web/index.html") << "<!doctype html><script src=/app.js></script>\n";
    std::ofstream(made->scratch + "/web/app.js") << "document.title = 'rung';\n";
    server::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.database_path = made->scratch + "/rung.db";
    options.user_token_file = made->scratch + "/user.token";
    options.worker_token_file = made->scratch + "/worker.token";
    StatusOr<std::string> user = server::WriteFreshTokenFile(options.user_token_file);
    if (!user.ok() || !server::WriteFreshTokenFile(options.worker_token_file).ok()) Die("cannot write tokens");
    StatusOr<std::unique_ptr<server::CoordinatorServer>> coordinator = server::CoordinatorServer::Start(options);
    if (!coordinator.ok()) Die(coordinator.status().ToString());
    made->coordinator = std::move(coordinator).value();
    auto stub = v1::UserService::NewStub(
        grpc::CreateChannel(made->coordinator->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + *user);
    context.AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
    v1::SubmitSweepRequest submit;
    submit.set_spec_text(kSpec);
    submit.set_spec_file_name("fuzz.yaml");
    v1::SubmitSweepResponse submitted;
    if (grpc::Status status = stub->SubmitSweep(&context, submit, &submitted); !status.ok()) {
      Die("SubmitSweep: " + status.error_message());
    }
    dashboard::DashboardOptions dashboard_options;
    dashboard_options.connection.address = made->coordinator->address();
    dashboard_options.connection.token_file = options.user_token_file;
    dashboard_options.connection.timeout_seconds = 5;
    dashboard_options.listen = "127.0.0.1:0";
    dashboard_options.web_root = made->scratch + "/web";
    StatusOr<std::unique_ptr<dashboard::DashboardServer>> dashboard = dashboard::DashboardServer::Start(dashboard_options);
    if (!dashboard.ok()) Die(dashboard.status().ToString());
    made->dashboard = std::move(dashboard).value();
    std::atexit([] {
      State& state = Shared();
      state.dashboard.reset();
      state.coordinator.reset();
      std::error_code ignored;
      fs::remove_all(state.scratch, ignored);
    });
    return made;
  }();
  return *state;
}

// Sends `request` on a fresh connection and returns what came back (until close, or 5 s). With
// `half_close` the sending side is shut after the request (a truncated request ends there); the
// server may then close without answering, as it may for any request whose client has gone.
std::string Exchange(int port, const std::string& request, bool half_close) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die(std::string("socket: ") + std::strerror(errno));
  // Two connections an input leave a connection in TIME_WAIT each (a half-closed one on the harness's
  // side), which would take every ephemeral port of one source address within a minute (connect then
  // fails with EADDRNOTAVAIL: a finding of the harness, not of the server). So the harness closes with
  // a reset where it can, and connects from source addresses 127.0.0.2 .. 127.0.0.251 in turn.
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  static uint32_t connections = 0;
  sockaddr_in source{};
  source.sin_family = AF_INET;
  source.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1 + (connections++ % 250));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof(source)) != 0) {
    Die(std::string("bind: ") + std::strerror(errno));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    Die(std::string("connect: ") + std::strerror(errno));
  }
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on a bad request
    sent += static_cast<size_t>(n);
  }
  if (half_close) ::shutdown(fd, SHUT_WR);
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  char buffer[65536];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd poll_fd{fd, POLLIN, 0};
    if (::poll(&poll_fd, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
    if (answer.size() > (64u << 20)) break;
  }
  ::close(fd);
  return answer;
}

}  // namespace
}  // namespace rung::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rung::fuzz;
  State& state = Shared();
  if (size == 0 || size > (1u << 20)) return 0;
  std::string request(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0) {
    const std::string cookie = std::string("Cookie: ") + rung::dashboard::kLoginCookie + "=" +
                               state.dashboard->gate().token() + "\r\n";
    const size_t line_end = request.find("\r\n");
    if (line_end != std::string::npos) request.insert(line_end + 2, cookie);
  }
  const std::string answer = Exchange(state.dashboard->port(), request, /*half_close=*/true);
  if (!answer.empty() && answer.rfind("HTTP/1.", 0) != 0) Die("a response without a status line: " + answer.substr(0, 80));
  const std::string check = Exchange(state.dashboard->port(), std::string("GET /api/sweeps HTTP/1.1\r\nHost: x\r\nCookie: ") +
                                                                  rung::dashboard::kLoginCookie + "=" +
                                                                  state.dashboard->gate().token() +
                                                                  "\r\nConnection: close\r\n\r\n",
                                       /*half_close=*/false);
  if (check.rfind("HTTP/1.1 200", 0) != 0) Die("the dashboard stopped answering: " + check.substr(0, 200));
  return 0;
}
