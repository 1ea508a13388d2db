// coordinator/store/clock.h
//
// Time for the coordinator's store: a seam, so that lease expiry, heartbeats and restarts are tested
// without sleeping. The store reads the time only through a Clock; production passes SystemClock,
// tests pass ManualClock and move it by hand. Everything else (database, transactions) stays real.
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

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rung {

using Timestamp = std::chrono::time_point<std::chrono::system_clock, std::chrono::microseconds>;

inline int64_t ToUnixMicros(Timestamp time) { return time.time_since_epoch().count(); }
inline Timestamp FromUnixMicros(int64_t micros) { return Timestamp(std::chrono::microseconds(micros)); }

// Where the store gets "now" from.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp Now() const = 0;
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
  void Set(Timestamp time) { now_micros_.store(ToUnixMicros(time)); }
  void Advance(std::chrono::microseconds delta) { now_micros_.fetch_add(delta.count()); }

 private:
  std::atomic<int64_t> now_micros_;
};

}  // namespace rung
