#include "coordinator/dashboard/connection_guard.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

namespace rung::dashboard {
namespace {

constexpr int kWriteStallMs = 5000;

// A whole response that closes the connection, for the poller and the accept thread (which write
// it without waiting, once).
std::string Canned(const std::string& status_line, const std::string& message) {
  const std::string body = "{\"error\": \"" + message + "\"}\n";
  return "HTTP/1.1 " + status_line + "\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}
const std::string& Busy() {
  static const std::string canned =
      Canned("503 Service Unavailable", "the dashboard has too many connections open; try again shortly");
  return canned;
}
const std::string& TooSlow() {
  static const std::string canned =
      Canned("408 Request Timeout", "the request head did not arrive whole within the deadline");
  return canned;
}

// httplib runs each accepted socket's task at once on its accept thread (GuardedServer's override
// only hands the socket on).
class InlineQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

int MsUntil(std::chrono::steady_clock::time_point when) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60 * 60 * 1000));
}

// Waits for `events` on fd up to timeout_ms: true when ready (or in error: the next call says).
bool WaitFor(int fd, short events, int timeout_ms) {
  pollfd one{fd, events, 0};
  for (;;) {
    const int n = ::poll(&one, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

void Address(const sockaddr_storage& address, socklen_t length, std::string& ip, int& port) {
  char host[NI_MAXHOST] = {0};
  char service[NI_MAXSERV] = {0};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof(host), service, sizeof(service),
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(service);
  }
}

// httplib's view of a connection: the bytes the poller already received first, then the
// (non-blocking) socket, or TLS over it; each read waits no later than the request's deadline, a
// write at most 5 s for the client to take more.
class GuardedStream final : public httplib::Stream {
 public:
  GuardedStream(int fd, SSL* ssl, std::string buffered, std::chrono::steady_clock::time_point deadline)
      : fd_(fd), ssl_(ssl), buffered_(std::move(buffered)), deadline_(deadline) {}

  bool is_readable() const override {
    return offset_ < buffered_.size() || (ssl_ && SSL_pending(ssl_) > 0) || WaitFor(fd_, POLLIN, MsUntil(deadline_));
  }
  bool is_writable() const override { return WaitFor(fd_, POLLOUT, kWriteStallMs); }

  ssize_t read(char* ptr, size_t size) override {
    if (offset_ < buffered_.size()) {
      const size_t n = std::min(size, buffered_.size() - offset_);
      std::memcpy(ptr, buffered_.data() + offset_, n);
      offset_ += n;
      return static_cast<ssize_t>(n);
    }
    for (;;) {
      short wait_for = POLLIN;
      if (ssl_) {
        ERR_clear_error();
        const int n = SSL_read(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
        if (n > 0) return n;
        const int error = SSL_get_error(ssl_, n);
        if (error == SSL_ERROR_ZERO_RETURN) return 0;
        if (error == SSL_ERROR_WANT_WRITE) wait_for = POLLOUT;
        else if (error != SSL_ERROR_WANT_READ) return -1;
      } else {
        const ssize_t n = ::recv(fd_, ptr, size, 0);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      }
      if (!WaitFor(fd_, wait_for, MsUntil(deadline_))) return -1;  // past the deadline
    }
  }

  ssize_t write(const char* ptr, size_t size) override {
    for (;;) {
      short wait_for = POLLOUT;
      if (ssl_) {
        ERR_clear_error();
        const int n = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
        if (n > 0) return n;
        const int error = SSL_get_error(ssl_, n);
        if (error == SSL_ERROR_WANT_READ) wait_for = POLLIN;
        else if (error != SSL_ERROR_WANT_WRITE) return -1;
      } else {
        const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      }
      if (!WaitFor(fd_, wait_for, kWriteStallMs)) return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) Address(address, length, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) Address(address, length, ip, port);
  }
  int socket() const override { return fd_; }

  // What the poller received beyond this request (a pipelined next one).
  std::string Unread() const { return buffered_.substr(std::min(offset_, buffered_.size())); }

 private:
  int fd_;
  SSL* ssl_;
  std::string buffered_;
  size_t offset_ = 0;
  std::chrono::steady_clock::time_point deadline_;
};

// Writes a canned answer without waiting (best effort: it may not all fit, and then is cut short).
void SendNow(int fd, SSL* ssl, const std::string& bytes) {
  if (ssl) {
    if (SSL_is_init_finished(ssl)) {
      ERR_clear_error();
      (void)SSL_write(ssl, bytes.data(), static_cast<int>(bytes.size()));
    }
    return;
  }
  (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

GuardedServer::GuardedServer(ConnectionLimits limits) : limits_(limits) {
  new_task_queue = [] { return new InlineQueue(); };
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  poller_ = std::thread([this] { PollLoop(); });
  for (int i = 0; i < limits_.workers; ++i) workers_.emplace_back([this] { WorkLoop(); });
}

GuardedServer::~GuardedServer() {
  stopping_ = true;
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
  ready_signal_.notify_all();
  poller_.join();
  for (std::thread& worker : workers_) worker.join();
  for (Connection& connection : incoming_) Close(connection.fd, connection.ssl);
  for (Connection& connection : ready_) Close(connection.fd, connection.ssl);
  if (wake_[0] >= 0) ::close(wake_[0]);
  if (wake_[1] >= 0) ::close(wake_[1]);
  if (tls_) SSL_CTX_free(tls_);
}

Status GuardedServer::ServeTls(const std::string& cert_file, const std::string& key_file) {
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr) return Status::Internal("cannot make a TLS context (OpenSSL)");
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  SSL_CTX_set_options(context, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(context, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(context, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(context) != 1) {
    ERR_clear_error();
    SSL_CTX_free(context);
    return Status::InvalidArgument("cannot serve HTTPS with " + cert_file + " and " + key_file +
                                   ": unreadable, not PEM, or the key does not match");
  }
  tls_ = context;
  return Status::Ok();
}

void GuardedServer::WidenBacklog() {
  const int listening = svr_sock_;
  if (listening >= 0) ::listen(listening, std::max(limits_.max_connections, 5));
}

bool GuardedServer::process_and_close_socket(int sock) {
  if (open_.fetch_add(1) >= limits_.max_connections || stopping_) {
    if (!tls_) SendNow(sock, nullptr, Busy());  // (under TLS there is no quick way to say it)
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    open_.fetch_sub(1);
    return false;
  }
  ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  const int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  Connection connection;
  connection.fd = sock;
  connection.deadline = Clock::now() + limits_.head_deadline;
  if (tls_) {
    connection.ssl = SSL_new(tls_);
    if (connection.ssl == nullptr || SSL_set_fd(connection.ssl, sock) != 1) {
      Close(sock, connection.ssl);
      return false;
    }
    SSL_set_accept_state(connection.ssl);
  }
  ToPoller(std::move(connection));
  return true;
}

bool GuardedServer::HeadIsWhole(Connection& connection) const {
  if (connection.buffered.size() >= limits_.max_head_bytes) return true;
  const size_t from = connection.searched >= 3 ? connection.searched - 3 : 0;
  if (connection.buffered.find("\r\n\r\n", from) != std::string::npos) return true;
  connection.searched = connection.buffered.size();
  return false;
}

void GuardedServer::ToPoller(Connection connection) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming_.push_back(std::move(connection));
  }
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
}

void GuardedServer::Close(int fd, SSL* ssl) {
  open_.fetch_sub(1);  // first: a client that sees the close may connect again at once
  if (ssl) {
    if (SSL_is_init_finished(ssl)) {
      ERR_clear_error();
      (void)SSL_shutdown(ssl);  // the close_notify, if it fits; no waiting for the client's
    }
    SSL_free(ssl);
    ERR_clear_error();
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

bool GuardedServer::ReceiveSome(Connection& connection) {
  char chunk[4096];
  connection.wants = POLLIN;
  while (connection.buffered.size() < limits_.max_head_bytes) {
    if (connection.ssl) {
      ERR_clear_error();
      const int got = SSL_read(connection.ssl, chunk, sizeof(chunk));  // runs the handshake first
      if (got > 0) {
        connection.buffered.append(chunk, static_cast<size_t>(got));
        continue;
      }
      const int error = SSL_get_error(connection.ssl, got);
      if (error == SSL_ERROR_WANT_READ) return true;
      if (error == SSL_ERROR_WANT_WRITE) {
        connection.wants = POLLOUT;
        return true;
      }
      return false;
    }
    const ssize_t got = ::recv(connection.fd, chunk, sizeof(chunk), 0);
    if (got > 0) {
      connection.buffered.append(chunk, static_cast<size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  return true;
}

void GuardedServer::PollLoop() {
  std::map<int, Connection> waiting;  // fd -> its connection, head not whole yet
  std::vector<pollfd> polled;
  auto to_workers = [this](Connection connection) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(connection));
    }
    ready_signal_.notify_one();
  };
  while (!stopping_) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (Connection& connection : incoming_) {
        // Back from a worker, TLS may hold bytes already decrypted that poll() will not announce.
        if (connection.ssl && SSL_pending(connection.ssl) > 0 && !ReceiveSome(connection)) {
          Close(connection.fd, connection.ssl);
          continue;
        }
        if (HeadIsWhole(connection)) {
          ready_.push_back(std::move(connection));
          ready_signal_.notify_one();
        } else {
          const int fd = connection.fd;
          waiting[fd] = std::move(connection);
        }
      }
      incoming_.clear();
    }
    if (open_ > limits_.max_connections * 7 / 8) {
      std::vector<std::pair<Clock::time_point, int>> idle;  // deadline (longest idle first), fd
      for (const auto& [fd, connection] : waiting) {
        if (connection.served && connection.buffered.empty()) idle.emplace_back(connection.deadline, fd);
      }
      std::sort(idle.begin(), idle.end());
      for (size_t i = 0; i < idle.size() && open_ > limits_.max_connections * 3 / 4; ++i) {
        Close(idle[i].second, waiting[idle[i].second].ssl);
        waiting.erase(idle[i].second);
      }
    }
    polled.assign(1, pollfd{wake_[0], POLLIN, 0});
    Clock::time_point soonest = Clock::now() + std::chrono::hours(1);
    for (const auto& [fd, connection] : waiting) {
      polled.push_back(pollfd{fd, connection.wants, 0});
      soonest = std::min(soonest, connection.deadline);
    }
    const int n = ::poll(polled.data(), polled.size(), MsUntil(soonest) + 1);
    if (n < 0 && errno != EINTR) break;
    if (polled[0].revents) {
      char drain[256];
      while (::read(wake_[0], drain, sizeof(drain)) > 0) {
      }
    }
    const Clock::time_point now = Clock::now();
    for (size_t i = 1; i < polled.size(); ++i) {
      auto found = waiting.find(polled[i].fd);
      Connection& connection = found->second;
      const bool gone = polled[i].revents != 0 && !ReceiveSome(connection);
      if (HeadIsWhole(connection)) {  // even if the client then shut down
        to_workers(std::move(connection));
        waiting.erase(found);
      } else if (gone) {
        Close(connection.fd, connection.ssl);
        waiting.erase(found);
      } else if (now >= connection.deadline) {
        if (!connection.buffered.empty()) SendNow(connection.fd, connection.ssl, TooSlow());
        Close(connection.fd, connection.ssl);
        waiting.erase(found);
      }
    }
  }
  for (auto& [fd, connection] : waiting) Close(fd, connection.ssl);
}

void GuardedServer::WorkLoop() {
  for (;;) {
    Connection connection;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_signal_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
      if (ready_.empty()) return;  // stopping
      connection = std::move(ready_.front());
      ready_.pop_front();
    }
    GuardedStream stream(connection.fd, connection.ssl, std::move(connection.buffered),
                         Clock::now() + limits_.head_deadline);
    bool closed = false;
    const bool served = process_request(stream, /*close_connection=*/stopping_.load(), closed, nullptr);
    if (served && !closed && !stopping_) {
      connection.buffered = stream.Unread();
      connection.searched = 0;
      connection.wants = POLLIN;
      connection.deadline = Clock::now() + limits_.head_deadline;
      connection.served = true;
      ToPoller(std::move(connection));
    } else {
      Close(connection.fd, connection.ssl);
    }
  }
}

}  // namespace rung::dashboard
