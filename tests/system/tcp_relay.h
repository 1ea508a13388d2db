// tests/system/tcp_relay.h
//
// A TCP relay on 127.0.0.1 for partition tests: it accepts on a port of its own and forwards bytes
// both ways between each accepted connection and a new connection to the target port. Cut() is a
// network partition as a blackhole: nothing is forwarded and nothing new is accepted (connections
// the kernel completes in the backlog hang), but no connection is closed, so a peer sees silence,
// not an error. Restore() heals it: buffered bytes flow on and new connections are served.
//
// Example:
//   ASSERT_OK_AND_ASSIGN(std::unique_ptr<TcpRelay> relay, TcpRelay::Start(coordinator_port));
//   StartWorker("first", "127.0.0.1:" + std::to_string(relay->port()));
//   relay->Cut();  ...  relay->Restore();
//
// Thread safety: Cut and Restore may be called from any thread; one thread relays.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "core/common/status.h"

namespace rung::system_test {

class TcpRelay {
 public:
  // Listens on a free loopback port and relays to 127.0.0.1:`target_port`. Errors: UNAVAILABLE.
  static StatusOr<std::unique_ptr<TcpRelay>> Start(int target_port);
  ~TcpRelay();  // closes every connection
  TcpRelay(const TcpRelay&) = delete;
  TcpRelay& operator=(const TcpRelay&) = delete;

  int port() const { return port_; }
  void Cut();
  void Restore();

 private:
  TcpRelay(int listener, int port, int target_port, int wake_read, int wake_write);
  void Run();

  const int listener_;
  const int port_;
  const int target_port_;
  const int wake_read_;   // a byte written here wakes the relay thread
  const int wake_write_;
  std::atomic<bool> cut_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rung::system_test
