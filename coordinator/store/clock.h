// coordinator/store/clock.h
//
// Time for the coordinator's store: a seam, so that lease expiry, heartbeats and restarts are tested
// without sleeping. The store reads the time only through a Clock; production passes SystemClock,
// tests pass ManualClock and move it by hand. Everything else (database, transactions) stays real.
// Whoever waits for a time on a Clock (the lease reaper) also watches it: a ManualClock calls its
// watchers after every move, in the thread that moved it, so that what falls due happens then.
//
// Times are microseconds since the Unix epoch (UTC); the database stores them as INTEGER columns in
// the same unit (SCHEMA.md shows how to print them with sqlite3).
//
// Example:
//   ManualClock clock(FromUnixMicros(1'700'000'000'000'000));
//   clock.Advance(std::chrono::seconds(30));
//   int64_t stored = ToUnixMicros(clock.Now());
//
// Thread safety: SystemClock and ManualClock are safe to use from any thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace rung {

using Timestamp = std::chrono::time_point<std::chrono::system_clock, std::chrono::microseconds>;

inline int64_t ToUnixMicros(Timestamp time) { return time.time_since_epoch().count(); }
inline Timestamp FromUnixMicros(int64_t micros) { return Timestamp(std::chrono::microseconds(micros)); }

// Where the store gets "now" from.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp Now() const = 0;
  // Calls `*moved` after every jump of this clock (a ManualClock set or advanced; a SystemClock
  // never jumps: its waiters sleep), until Unwatch(moved). REQUIRES: `*moved` outlives the watch.
  virtual void Watch(const std::function<void()>* /*moved*/) const {}
  virtual void Unwatch(const std::function<void()>* /*moved*/) const {}
};

// The wall clock (std::chrono::system_clock), truncated to microseconds.
class SystemClock final : public Clock {
 public:
  Timestamp Now() const override {
    return std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
  }
};

// A clock that moves only when told: for tests.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Timestamp start) : now_micros_(ToUnixMicros(start)) {}

  Timestamp Now() const override { return FromUnixMicros(now_micros_.load()); }
  void Set(Timestamp time) {
    now_micros_.store(ToUnixMicros(time));
    Moved();
  }
  void Advance(std::chrono::microseconds delta) {
    now_micros_.fetch_add(delta.count());
    Moved();
  }

  void Watch(const std::function<void()>* moved) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    watchers_.push_back(moved);
  }
  void Unwatch(const std::function<void()>* moved) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    watchers_.erase(std::remove(watchers_.begin(), watchers_.end(), moved), watchers_.end());
  }

 private:
  void Moved() const {
    std::vector<const std::function<void()>*> watchers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      watchers = watchers_;
    }
    for (const std::function<void()>* moved : watchers) (*moved)();
  }

  std::atomic<int64_t> now_micros_;
  mutable std::mutex mutex_;
  mutable std::vector<const std::function<void()>*> watchers_;  // guarded by mutex_
};

}  // namespace rung
