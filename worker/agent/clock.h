// worker/agent/clock.h
//
// Time for the worker agent: a seam, so that batch delays, heartbeats, grace periods and retry
// backoffs are tested without sleeping. The agent reads the time and waits for it only through a
// Clock: "now", waiting on a condition variable until a time, and sleeping. Production passes
// RealClock() (std::chrono::steady_clock); tests pass a ManualClock and move it by hand. Everything
// else (gRPC, processes, pipes) stays real and runs on real time.
//
// The shape is the coordinator's (coordinator/store/clock.h: Clock, SystemClock, ManualClock), on a
// different time line: the store stamps rows with wall-clock time, the agent times waits on a
// monotonic one (a wall clock that jumps would delay a heartbeat or cut a batch early), so the two
// share no code.
//
// Example:
//   ManualClock clock;
//   MetricRelay relay(client, trial, attempt, options, clock);
//   relay.AddStdout(line, nullptr);                         // due batch_delay from now
//   clock.AwaitWaiter(clock.Now() + options.batch_delay);   // the sender sleeps until then
//   clock.Advance(options.batch_delay);                     // ... and now sends the batch
//
// Thread safety: RealClock() and ManualClock are safe to use from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>

namespace rung::agent {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;

  virtual ~Clock() = default;

  virtual TimePoint Now() const = 0;

  // REQUIRES: `lock` holds the mutex every change of `done()` is made under, and that notifies `cv`.
  // Waits until `done()` holds (checked at once and whenever `cv` is notified) or this clock reaches
  // `deadline` (TimePoint::max(): never); returns done(). As std::condition_variable::wait_until.
  virtual bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline,
                         const std::function<bool()>& done) const = 0;
  // WaitUntil(cv, lock, Now() + duration, done).
  bool WaitFor(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Duration duration,
               const std::function<bool()>& done) const;

  // Returns once this clock has reached `deadline`.
  void SleepUntil(TimePoint deadline) const;
  void SleepFor(Duration duration) const;
};

// std::chrono::steady_clock, waits and sleeps in real time. One per process, stateless.
const Clock& RealClock();

// A clock that moves only when told: for tests. It starts at an arbitrary time point (not 0, so
// that a time before it is still representable) and never goes back.
class ManualClock final : public Clock {
 public:
  ManualClock();
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  TimePoint Now() const override;
  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline,
                 const std::function<bool()>& done) const override;

  // Moves the clock `delta` on, wakes every thread waiting on it, and returns once each of them has
  // seen the new time (gone on, or waits again having checked its condition at the new time).
  void Advance(Duration delta);

  // Waits, in real time up to `timeout`, until some thread waits on this clock for exactly
  // `deadline`, having checked its condition at the current time; false if none did. Then, until
  // the clock moves, that thread does nothing but what a notification of its condition variable
  // makes it do.
  bool AwaitWaiter(TimePoint deadline, std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // The same for `count` threads, whatever their deadlines.
  bool AwaitWaiters(size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

 private:
  struct Waiter {
    std::condition_variable* cv;
    TimePoint deadline;
    TimePoint checked_at;  // the clock's time when it last found its condition false
  };
  mutable std::mutex mutex_;
  mutable std::condition_variable waiters_changed_;
  TimePoint now_;
  mutable std::set<Waiter*> waiters_;
};

}  // namespace rung::agent
