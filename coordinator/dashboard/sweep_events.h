// coordinator/dashboard/sweep_events.h
//
// A sweep's live updates as server-sent events: follows the coordinator's StreamSweepUpdates for
// one sweep on a thread of its own and hands out each update as one SSE message
// ("event: update\ndata: {...}\n\n", the SweepUpdate as JSON with the proto's field names). The
// coordinator sends an update as soon as a trial changes, a metric batch landing included; when the
// sweep finishes the stream ends with "event: end". Next() waits at most `wait` and answers an SSE
// comment (": keep-alive") when nothing came, so that a server notices a closed page.
//
// Example:
//   SweepEvents events(connection, sweep_id);
//   while (std::optional<std::string> message = events.Next(std::chrono::seconds(10))) write(*message);
//
// Thread safety: Next from one thread; the destructor cancels the stream and joins the thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "coordinator/cli/coordinator_connection.h"

namespace rung::dashboard {

class SweepEvents {
 public:
  SweepEvents(cli::CoordinatorConnection& connection, int64_t sweep_id);
  ~SweepEvents();
  SweepEvents(const SweepEvents&) = delete;
  SweepEvents& operator=(const SweepEvents&) = delete;

  // The next SSE message; a keep-alive comment after `wait` without one; nullopt once the stream
  // has ended and its last message ("event: end" or "event: error") was handed out.
  std::optional<std::string> Next(std::chrono::milliseconds wait);

 private:
  void Follow(cli::CoordinatorConnection& connection, int64_t sweep_id);

  std::unique_ptr<grpc::ClientContext> context_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::string> messages_;
  bool ended_ = false;
  std::thread follower_;
};

}  // namespace rung::dashboard
