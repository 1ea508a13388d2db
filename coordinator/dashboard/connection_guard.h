// coordinator/dashboard/connection_guard.h
//
// GuardedServer: the httplib::Server of `rung dashboard` (HTTP or HTTPS), with connections that slow or
// idle clients cannot hoard. httplib gives each connection a thread from the moment it is accepted,
// and its read timeout is per recv: a client sending one header line every 1.5 s holds a thread for
// ever, and 64 of them stopped the dashboard. Here instead:
//   - one poller thread holds every connection until its request head (up to the blank line) has
//     arrived whole; only then does a worker thread run the request (httplib's parsing, routing and
//     handlers, unchanged). Between keep-alive requests the connection goes back to the poller.
//   - the whole head must arrive within limits.head_deadline, counted from the accept or from the
//     previous response: past it the client gets 408 and is closed (idle keep-alive connections are
//     closed the same way, without the 408). A request body must arrive within the same span
//     counted from the head; a write that cannot progress for 5 s fails.
//   - under TLS (ServeTls) the poller also runs the handshake, within the same deadline.
//   - at most limits.max_connections are open at once; one more is answered 503 and closed at
//     once. Past 7/8 of it, the poller closes idle keep-alive connections, the longest idle first,
//     down to 3/4, so that clients which already closed their end (and are not yet noticed) or
//     merely hold one open do not crowd out new ones. The listen backlog is widened to the limit
//     (httplib's is 5).
// The workers: limits.workers threads; a connection waits for one only with a whole request in hand.
//
// Example:
//   auto http = std::make_unique<GuardedServer>(ConnectionLimits{});
//   http->Get("/", handler);
//   int port = http->bind_to_any_port("127.0.0.1");
//   http->WidenBacklog();
//   std::thread listener([&] { http->listen_after_bind(); });
//   ... http->stop(); listener.join(); http.reset();  // the destructor joins the poller and workers
//
// Thread safety: httplib's (routes before listening; stop from any thread). The destructor must run
// after listen_after_bind has returned. Under TLS, OpenSSL writes with write(2): the process should
// ignore SIGPIPE (`rung dashboard` does), or a client gone mid-answer kills it.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/common/status.h"

namespace rung::dashboard {

struct ConnectionLimits {
  int max_connections = 1024;
  std::chrono::milliseconds head_deadline{5000};
  int workers = 64;
  size_t max_head_bytes = 64 * 1024;  // a longer head goes to a worker as it is (httplib answers 400/414/431)
};

class GuardedServer final : public httplib::Server {
 public:
  explicit GuardedServer(ConnectionLimits limits);
  ~GuardedServer() override;

  // Serve HTTPS with this PEM certificate chain and key (TLS 1.2 and up): the poller runs each
  // handshake and decrypts the head under the same deadline. Before listening. INVALID_ARGUMENT if
  // the files are unreadable, not PEM, or do not match.
  Status ServeTls(const std::string& cert_file, const std::string& key_file);

  // After bind_to_port or bind_to_any_port.
  void WidenBacklog();

  // Connections open now (waiting for a head, or running a request).
  int open_connections() const { return open_.load(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    SSL* ssl = nullptr;  // under TLS
    short wants = POLLIN;  // what the poller waits for (a TLS handshake may need to write)
    std::string buffered;  // received and not yet read by httplib
    Clock::time_point deadline;
    bool served = false;  // it has had a response: waiting now means idle keep-alive
    size_t searched = 0;  // buffered[0, searched) holds no "\r\n\r\n" (each byte is looked at once)
  };

  // Called by httplib's accept loop (on its thread: the task queue runs it inline) for each accepted
  // socket: refuses it past the limit, else hands it to the poller.
  bool process_and_close_socket(int sock) override;  // socket_t is int here
  // Whether the buffered bytes hold the whole head (or as much as a head may be).
  bool HeadIsWhole(Connection& connection) const;
  void ToPoller(Connection connection);
  // Reads what has arrived into connection.buffered; false when the client is gone (closed, error).
  bool ReceiveSome(Connection& connection);
  void Close(int fd, SSL* ssl);
  void PollLoop();
  void WorkLoop();

  const ConnectionLimits limits_;
  SSL_CTX* tls_ = nullptr;
  std::atomic<int> open_{0};
  std::atomic<bool> stopping_{false};
  int wake_[2] = {-1, -1};  // a pipe: writing a byte wakes the poller

  std::mutex mutex_;
  std::condition_variable ready_signal_;
  std::vector<Connection> incoming_;  // for the poller
  std::deque<Connection> ready_;      // whole heads, for the workers

  std::thread poller_;
  std::vector<std::thread> workers_;
};

}  // namespace rung::dashboard
