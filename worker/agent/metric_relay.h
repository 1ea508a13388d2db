// worker/agent/metric_relay.h
//
// Relays one attempt's output to the coordinator in ReportMetrics batches. Lines are buffered as they
// come; a batch is cut when `batch_lines` lines are waiting, when the oldest has waited `batch_delay`,
// when the provenance record (the trial becomes RUNNING) has waited `provenance_delay`, and at once
// while draining (at the end of an attempt, Drain() sends the rest and waits for it). Batches
// carry sequence numbers 1, 2, ... and go one at a time: a batch is resent, unchanged, until the
// coordinator acknowledges it, and only then is the next one cut. While the coordinator is
// unreachable the relay keeps buffering (memory grows with the output, a few hundred bytes per step
// record) and resends with backoff; when it returns, everything goes in order.
//
// The relay stops for good on an answer that retrying cannot change: FAILED_PRECONDITION (the
// attempt is fenced: stop the trainer, report nothing more), OUT_OF_RANGE, INVALID_ARGUMENT,
// NOT_FOUND or INTERNAL. status() tells which; lines added after that are dropped.
//
// A sender thread of its own does the calls, so a slow or absent coordinator never blocks the thread
// that reads the trainer's pipe (a full pipe would stall training).
//
// Example:
//   MetricRelay relay(client, lease.trial_id(), lease.attempt(), RelayOptions{});
//   relay.AddStdout(line, records.Add(line));   // the line, and its typed record (nullptr: none)
//   relay.AddStderr(stderr_line);
//   StatusOr<int64_t> last = relay.Drain();  // after the trainer exited: the last batch, for Complete
//
// Thread safety: thread-safe; every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/common/status.h"
#include "core/records/trainer_records.h"
#include "proto/rung.pb.h"
#include "proto/trainer_record_proto.h"
#include "worker/agent/backoff.h"
#include "worker/agent/clock.h"
#include "worker/agent/coordinator_client.h"

namespace rung::agent {

struct RelayOptions {
  size_t batch_lines = 64;                      // cut a batch once this many lines wait
  std::chrono::milliseconds batch_delay{1000};  // ... or once the oldest has waited this long
  // ... or once the provenance record has waited this long (0: at once).
  std::chrono::milliseconds provenance_delay{100};
  size_t max_batch_bytes = 1 << 20;             // batches stay below this (the coordinator takes 4 MiB)
  BackoffPolicy retry_backoff{std::chrono::milliseconds(200), std::chrono::milliseconds(2000), 2.0};
};

class MetricRelay {
 public:
  // Starts the sender thread. Delays and deadlines are on `clock`. REQUIRES: `client` and `clock`
  // outlive the relay.
  MetricRelay(CoordinatorClient* client, int64_t trial_id, int64_t attempt, RelayOptions options,
              const Clock& clock = RealClock());
  // Abandon()s and joins the sender.
  ~MetricRelay();
  MetricRelay(const MetricRelay&) = delete;
  MetricRelay& operator=(const MetricRelay&) = delete;

  // Buffers one stdout line: the trainer record it holds, typed, when `record` is given (a
  // provenance record makes its batch due sooner), else the line as text.
  void AddStdout(std::string line, const records::TrainerRecord* record);
  // Buffers one stderr line.
  void AddStderr(std::string line);

  // Sends everything buffered and waits until every batch is acknowledged: returns the last
  // sequence (0 when nothing was ever sent). Errors: the relay's terminal status; ABORTED after
  // Abandon(); UNAVAILABLE when `deadline` passes first (the relay keeps trying).
  StatusOr<int64_t> Drain(Clock::TimePoint deadline = Clock::TimePoint::max());

  // Stops sending now (a call in flight is cancelled); what is unsent is dropped.
  void Abandon();

  // OK while relaying; the terminal error once the coordinator refused a batch for good.
  Status status() const;
  // The newest acknowledged sequence.
  int64_t acknowledged_sequence() const;

 private:
  struct Line {
    bool is_stdout = true;  // else stderr
    std::string text;                         // a line that is no record (or a stderr line)
    std::optional<v1::TrainerRecord> record;  // a record, sent typed (its text is not kept)
    bool provenance = false;
    Clock::TimePoint added;
    size_t bytes = 0;
  };

  void Add(Line line);
  void SendLoop();
  // REQUIRES: mutex_ held. Wakes the sender (and every waiter): what it waits for may have changed.
  void ChangedLocked();
  // REQUIRES: `lock` holds mutex_. Waits until `sent()`, the relay stops for good, or `deadline`:
  // OK, the terminal error, ABORTED (abandoned) or UNAVAILABLE (deadline).
  Status WaitLocked(std::unique_lock<std::mutex>& lock, Clock::TimePoint deadline, const std::function<bool()>& sent);
  // REQUIRES: mutex_ held. Whether the buffered lines make a batch now; else when they will.
  bool BatchDue(Clock::TimePoint now, Clock::TimePoint* when) const;
  // REQUIRES: mutex_ held, buffer_ not empty. Moves the next batch's lines into a request.
  v1::ReportMetricsRequest CutBatch();

  CoordinatorClient* client_;
  const int64_t trial_id_;
  const int64_t attempt_;
  const RelayOptions options_;
  const Clock& clock_;
  CallInterrupter interrupter_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // lines added, batch acknowledged, drain, abandon, terminal error
  uint64_t changes_ = 0;             // counts ChangedLocked() calls
  std::deque<Line> buffer_;
  size_t buffered_provenance_ = 0;
  std::optional<v1::ReportMetricsRequest> in_flight_;  // cut, not yet acknowledged
  int64_t last_sequence_ = 0;                          // of the newest batch cut
  int64_t acknowledged_ = 0;
  bool draining_ = false;
  size_t buffered_bytes_ = 0;
  bool abandoned_ = false;
  Status terminal_;
  std::thread sender_;  // last: started by the constructor, once everything else is
};

}  // namespace rung::agent
