// coordinator/domain/metric_feed.cc
#include "coordinator/domain/metric_feed.h"

#include <algorithm>
#include <utility>

namespace rung {

struct MetricFeed::Queue {
  int64_t sweep_id = 0;
  std::vector<std::string> names;  // empty: every metric
  size_t capacity = kDefaultCapacity;
  std::deque<MetricArrival> arrivals;  // guarded by Shared::mutex
  bool resync = false;                 // guarded by Shared::mutex

  bool Wants(const std::string& name) const {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
  }
};

struct MetricFeed::Shared {
  mutable std::mutex mutex;
  std::vector<std::shared_ptr<Queue>> queues;  // guarded by mutex
  ChangeNotifier arrived;                      // moves after every publish; closed at Close()
};

MetricFeed::MetricFeed() : shared_(std::make_shared<Shared>()) {}

MetricFeed::~MetricFeed() { Close(); }

std::unique_ptr<MetricFeed::Subscription> MetricFeed::Subscribe(int64_t sweep_id, std::vector<std::string> names,
                                                                 size_t capacity) {
  auto queue = std::make_shared<Queue>();
  queue->sweep_id = sweep_id;
  queue->names = std::move(names);
  queue->capacity = std::max<size_t>(1, capacity);
  std::lock_guard<std::mutex> lock(shared_->mutex);
  shared_->queues.push_back(queue);
  return std::unique_ptr<Subscription>(new Subscription(shared_, std::move(queue)));
}

bool MetricFeed::HasSubscribers() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return !shared_->queues.empty();
}

void MetricFeed::Publish(int64_t sweep_id, int64_t trial_id, int64_t attempt, const std::vector<MetricPoint>& points) {
  if (points.empty()) return;
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    for (const std::shared_ptr<Queue>& queue : shared_->queues) {
      if (queue->sweep_id != sweep_id) continue;
      for (const MetricPoint& point : points) {
        // A resumed attempt's replay of an old step is stored only where the trial had no value
        // (metric_store.h); the store, not the feed, knows which: GetCurves shows them.
        if (point.replayed || !queue->Wants(point.name)) continue;
        if (queue->arrivals.size() >= queue->capacity) {
          // Behind by a whole queue: drop it all; the subscriber re-reads the store, which has these.
          queue->arrivals.clear();
          queue->resync = true;
          break;
        }
        queue->arrivals.push_back({trial_id, attempt, point});
        queued = true;
      }
      queued = queued || queue->resync;
    }
  }
  if (queued) shared_->arrived.Notify();
}

void MetricFeed::Close() { shared_->arrived.Close(); }

MetricFeed::Subscription::Subscription(std::shared_ptr<Shared> shared, std::shared_ptr<Queue> queue)
    : shared_(std::move(shared)), queue_(std::move(queue)) {}

MetricFeed::Subscription::~Subscription() {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  auto& queues = shared_->queues;
  queues.erase(std::remove(queues.begin(), queues.end(), queue_), queues.end());
}

MetricFeed::Taken MetricFeed::Subscription::Take(size_t max_arrivals, std::chrono::steady_clock::time_point deadline) {
  Taken taken;
  while (true) {
    // The generation first, then the queue: a publish between the two moves the generation, so the
    // wait below returns at once (change_notifier.h).
    const uint64_t seen = shared_->arrived.generation();
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      taken.resync = queue_->resync;
      queue_->resync = false;
      const size_t count = std::min(max_arrivals, queue_->arrivals.size());
      for (size_t i = 0; i < count; ++i) {
        taken.arrivals.push_back(std::move(queue_->arrivals.front()));
        queue_->arrivals.pop_front();
      }
    }
    taken.closed = shared_->arrived.closed();
    if (taken.resync || !taken.arrivals.empty() || taken.closed ||
        std::chrono::steady_clock::now() >= deadline) {
      return taken;
    }
    shared_->arrived.WaitForChange(seen, deadline);
  }
}

}  // namespace rung
