// coordinator/dashboard/sweep_events.h
//
// A sweep's live updates as server-sent events, from two coordinator streams, each followed on a
// thread of its own:
//   StreamSweepUpdates -> "event: update\ndata: {SweepUpdate}": states, counts, latest steps (the
//                         first one a snapshot of every trial); when the sweep finishes the stream
//                         ends with "event: end".
//   StreamMetrics      -> "event: metrics\ndata: {"arrivals": [[trial_id, step, tokens, flops,
//                         wall_time, value]], "resync": bool}": the points of `metric` as they are
//                         committed (resync: some were dropped, read the curves again).
// JSON with the proto's field names. Next() waits at most `wait` and answers an SSE comment
// (": keep-alive") when nothing came, so that a server notices a closed page.
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

#include "coordinator/client/coordinator_connection.h"

namespace rung::dashboard {

class SweepEvents {
 public:
  // `metric`: whose arrivals to send ("" none).
  SweepEvents(client::CoordinatorConnection& connection, int64_t sweep_id, const std::string& metric);
  ~SweepEvents();
  SweepEvents(const SweepEvents&) = delete;
  SweepEvents& operator=(const SweepEvents&) = delete;

  // The next SSE message; a keep-alive comment after `wait` without one; nullopt once the stream
  // has ended and its last message ("event: end" or "event: error") was handed out.
  std::optional<std::string> Next(std::chrono::milliseconds wait);

 private:
  void Follow(client::CoordinatorConnection& connection, int64_t sweep_id);
  void FollowMetrics(client::CoordinatorConnection& connection, int64_t sweep_id, const std::string& metric);
  void Push(std::string message);

  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientContext> metrics_context_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<std::string> messages_;
  bool ended_ = false;
  std::thread follower_;
  std::thread metrics_follower_;
};

}  // namespace rung::dashboard
