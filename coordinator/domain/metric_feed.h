// coordinator/domain/metric_feed.h
//
// Metric points as they are committed, handed to whoever follows a sweep (UserService.StreamMetrics):
// the Coordinator publishes each new metric batch's points after its commit (never a batch that
// failed, never a repeat), and each subscriber of that sweep gets them in its own queue. Points a
// resumed attempt replays (MetricPoint::replayed) are left out: the store keeps only some of them.
//
// Bounded memory: a subscriber's queue holds at most `capacity` points. A publish that would
// overflow it empties it and marks it "resync" instead: the subscriber learns that it fell behind
// and re-reads the curves from the store (everything published is committed there), while the
// coordinator never holds more than capacity points for it, however slow it reads.
//
// Waiting: Take blocks on a ChangeNotifier (change_notifier.h) that every publish moves, so a
// subscriber sleeps until something arrives, the deadline passes, or the feed closes (shutdown).
//
// Example:
//   std::unique_ptr<MetricFeed::Subscription> subscription = feed.Subscribe(sweep_id, {"val_loss"});
//   MetricFeed::Taken taken = subscription->Take(1000, std::chrono::steady_clock::now() + 1s);
//   if (taken.resync) ReadTheCurvesAgain();
//   for (const MetricArrival& arrival : taken.arrivals) Show(arrival);
//
// Thread safety: every method may be called from any thread; a Subscription is used by one thread
// at a time. A Subscription may outlive its feed (it then only reports closed).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "coordinator/domain/change_notifier.h"
#include "coordinator/store/store_types.h"

namespace rung {

// One committed metric point of a trial.
struct MetricArrival {
  int64_t trial_id = 0;
  int64_t attempt = 0;
  MetricPoint point;
};

class MetricFeed {
 public:
  // Points a subscriber's queue holds before it is told to resync.
  static constexpr size_t kDefaultCapacity = 100000;

  // What one Take hands over: the arrivals queued (oldest first, at most the number asked for);
  // resync when points were dropped since the previous Take (the arrivals are those published
  // after the drop); closed once the feed is closed.
  struct Taken {
    std::vector<MetricArrival> arrivals;
    bool resync = false;
    bool closed = false;
  };

  class Subscription;

  MetricFeed();
  ~MetricFeed();
  MetricFeed(const MetricFeed&) = delete;
  MetricFeed& operator=(const MetricFeed&) = delete;

  // Follows the sweep's points of the metrics `names` (empty: every metric) from now on.
  std::unique_ptr<Subscription> Subscribe(int64_t sweep_id, std::vector<std::string> names,
                                          size_t capacity = kDefaultCapacity);
  // Whether anyone follows a sweep (publishers skip the work of a publish otherwise).
  bool HasSubscribers() const;
  // Queues the points of a committed batch for the sweep's subscribers and wakes them.
  void Publish(int64_t sweep_id, int64_t trial_id, int64_t attempt, const std::vector<MetricPoint>& points);
  // Wakes every subscriber for good (shutdown): Take returns closed from then on.
  void Close();

 private:
  struct Queue;
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

class MetricFeed::Subscription {
 public:
  ~Subscription();
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  // Waits until an arrival or a resync is queued, the feed closes, or `deadline` passes, and takes
  // at most `max_arrivals` arrivals (the rest stay queued for the next Take).
  Taken Take(size_t max_arrivals, std::chrono::steady_clock::time_point deadline);

 private:
  friend class MetricFeed;
  Subscription(std::shared_ptr<Shared> shared, std::shared_ptr<Queue> queue);
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<Queue> queue_;
};

}  // namespace rung
