// tests/system/tcp_relay.cc
#include "tests/system/tcp_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace rung::system_test {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// Writes all of `data` to a blocking socket; false when the peer is gone.
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::send(fd, data, size, MSG_NOSIGNAL);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    data += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

struct Pair {
  int client = -1;
  int target = -1;
};

}  // namespace

StatusOr<std::unique_ptr<TcpRelay>> TcpRelay::Start(int target_port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Status::Unavailable(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof(address);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || ::listen(listener, 64) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string error = std::strerror(errno);
    ::close(listener);
    return Status::Unavailable("relay listener: " + error);
  }
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    ::close(listener);
    return Status::Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  std::unique_ptr<TcpRelay> relay(new TcpRelay(listener, ntohs(address.sin_port), target_port, wake[0], wake[1]));
  relay->thread_ = std::thread([raw = relay.get()] { raw->Run(); });
  return relay;
}

TcpRelay::TcpRelay(int listener, int port, int target_port, int wake_read, int wake_write)
    : listener_(listener), port_(port), target_port_(target_port), wake_read_(wake_read), wake_write_(wake_write) {}

TcpRelay::~TcpRelay() {
  stop_ = true;
  const char byte = 0;
  (void)!::write(wake_write_, &byte, 1);
  if (thread_.joinable()) thread_.join();
  ::close(listener_);
  ::close(wake_read_);
  ::close(wake_write_);
}

void TcpRelay::Cut() {
  cut_ = true;
  const char byte = 0;
  (void)!::write(wake_write_, &byte, 1);
}

void TcpRelay::Restore() {
  cut_ = false;
  const char byte = 0;
  (void)!::write(wake_write_, &byte, 1);
}

void TcpRelay::Run() {
  std::vector<Pair> pairs;
  std::vector<char> buffer(64 * 1024);
  while (!stop_) {
    // While cut, only the wake pipe is watched: the sockets keep their bytes in the kernel.
    std::vector<pollfd> watched = {{wake_read_, POLLIN, 0}};
    if (!cut_) {
      watched.push_back({listener_, POLLIN, 0});
      for (const Pair& pair : pairs) {
        watched.push_back({pair.client, POLLIN, 0});
        watched.push_back({pair.target, POLLIN, 0});
      }
    }
    if (::poll(watched.data(), watched.size(), 1000) < 0 && errno != EINTR) return;
    if (watched[0].revents & POLLIN) {
      char drain[64];
      while (::read(wake_read_, drain, sizeof(drain)) > 0) {
      }
    }
    if (cut_ || stop_) continue;
    std::vector<Pair> kept;
    for (size_t i = 0; i < pairs.size(); ++i) {
      Pair& pair = pairs[i];
      bool alive = true;
      for (int side = 0; side < 2 && alive; ++side) {
        const pollfd& polled = watched[2 + 2 * i + side];
        if (polled.revents == 0) continue;
        const int from = side == 0 ? pair.client : pair.target;
        const int to = side == 0 ? pair.target : pair.client;
        const ssize_t got = ::recv(from, buffer.data(), buffer.size(), 0);
        alive = got > 0 && WriteAll(to, buffer.data(), static_cast<size_t>(got));
      }
      if (alive) {
        kept.push_back(pair);
      } else {
        ::close(pair.client);
        ::close(pair.target);
      }
    }
    pairs = std::move(kept);
    if (watched[1].revents & POLLIN) {
      const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) {
        const int target = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const sockaddr_in address = Loopback(target_port_);
        if (target >= 0 && ::connect(target, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
          const int on = 1;
          ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
          ::setsockopt(target, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
          pairs.push_back({client, target});
        } else {
          ::close(client);  // the target is down: the peer's connection ends at once
          if (target >= 0) ::close(target);
        }
      }
    }
  }
  for (const Pair& pair : pairs) {
    ::close(pair.client);
    ::close(pair.target);
  }
}

}  // namespace rung::system_test
