// worker/agent/clock.cc
#include "worker/agent/clock.h"

namespace rung::agent {
namespace {

class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }

  bool WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline,
                 const std::function<bool()>& done) const override {
    if (deadline == TimePoint::max()) {
      cv.wait(lock, done);
      return true;
    }
    return cv.wait_until(lock, deadline, done);
  }
};

// How long Advance() waits before it notifies a waiter again that has not seen the new time: it
// may have found its condition false just before the clock moved, and not be waiting on its
// condition variable yet when the first notification came.
constexpr std::chrono::microseconds kRenotifyAfter{200};

}  // namespace

bool Clock::WaitFor(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, Duration duration,
                    const std::function<bool()>& done) const {
  return WaitUntil(cv, lock, Now() + duration, done);
}

void Clock::SleepUntil(TimePoint deadline) const {
  std::mutex mutex;
  std::condition_variable never_notified;
  std::unique_lock<std::mutex> lock(mutex);
  WaitUntil(never_notified, lock, deadline, [] { return false; });
}

void Clock::SleepFor(Duration duration) const { SleepUntil(Now() + duration); }

const Clock& RealClock() {
  static const SteadyClock clock;
  return clock;
}

// ------------------------------------------------------------------------------------ ManualClock

ManualClock::ManualClock() : now_(TimePoint() + std::chrono::hours(24)) {}

Clock::TimePoint ManualClock::Now() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return now_;
}

bool ManualClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline,
                            const std::function<bool()>& done) const {
  Waiter self{&cv, deadline, TimePoint::min()};
  {
    std::lock_guard<std::mutex> guard(mutex_);
    waiters_.insert(&self);
  }
  bool result = false;
  for (;;) {
    if (done()) {
      result = true;
      break;
    }
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (now_ >= deadline) break;
      self.checked_at = now_;
      waiters_changed_.notify_all();
    }
    cv.wait(lock);
  }
  std::lock_guard<std::mutex> guard(mutex_);
  waiters_.erase(&self);
  waiters_changed_.notify_all();
  return result;
}

void ManualClock::Advance(Duration delta) {
  std::unique_lock<std::mutex> lock(mutex_);
  now_ += delta;
  for (;;) {
    bool behind = false;
    for (Waiter* waiter : waiters_) {
      if (waiter->checked_at >= now_) continue;
      waiter->cv->notify_all();
      behind = true;
    }
    if (!behind) return;
    waiters_changed_.wait_for(lock, kRenotifyAfter);
  }
}

bool ManualClock::AwaitWaiter(TimePoint deadline, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return waiters_changed_.wait_for(lock, timeout, [&] {
    for (const Waiter* waiter : waiters_) {
      if (waiter->deadline == deadline && waiter->checked_at == now_) return true;
    }
    return false;
  });
}

bool ManualClock::AwaitWaiters(size_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return waiters_changed_.wait_for(lock, timeout, [&] {
    size_t waiting = 0;
    for (const Waiter* waiter : waiters_) {
      if (waiter->checked_at == now_) ++waiting;
    }
    return waiting >= count;
  });
}

}  // namespace rung::agent
