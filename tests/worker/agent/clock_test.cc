// tests/worker/agent/clock_test.cc
//
// The agent's clock seam: a ManualClock wakes a waiter only when it is moved to the waiter's
// deadline or the waiter's condition is notified, tells a test when a thread waits for a given time,
// and sleeps end when it reaches them; RealClock() waits in real time.
#include "worker/agent/clock.h"

#include <future>

#include <gtest/gtest.h>

namespace rung::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A condition variable, the mutex its condition is under, and the condition.
struct Waitable {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;

  // Waits on `clock` until `done` or `deadline`; returns what WaitUntil returned.
  bool Wait(const Clock& clock, Clock::TimePoint deadline) {
    std::unique_lock<std::mutex> lock(mutex);
    return clock.WaitUntil(cv, lock, deadline, [this] { return done; });
  }
  void Finish() {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    cv.notify_all();
  }
};

bool Ready(const std::future<bool>& future) { return future.wait_for(milliseconds(0)) == std::future_status::ready; }

TEST(ManualClockTest, AWaitEndsWhenTheClockReachesItsDeadlineAndNotBefore) {
  ManualClock clock;
  Waitable waitable;
  const Clock::TimePoint deadline = clock.Now() + seconds(10);
  std::future<bool> waited = std::async(std::launch::async, [&] { return waitable.Wait(clock, deadline); });
  ASSERT_TRUE(clock.AwaitWaiter(deadline));
  clock.Advance(seconds(9));
  ASSERT_TRUE(clock.AwaitWaiter(deadline)) << "it checked the new time and waits on";
  EXPECT_FALSE(Ready(waited));
  clock.Advance(seconds(1));
  ASSERT_EQ(waited.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_FALSE(waited.get()) << "the deadline, not the condition";
}

TEST(ManualClockTest, ANotifiedConditionEndsAWaitWithoutTheClockMoving) {
  ManualClock clock;
  Waitable waitable;
  const Clock::TimePoint start = clock.Now();
  std::future<bool> waited =
      std::async(std::launch::async, [&] { return waitable.Wait(clock, Clock::TimePoint::max()); });
  ASSERT_TRUE(clock.AwaitWaiter(Clock::TimePoint::max()));
  waitable.Finish();
  ASSERT_EQ(waited.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_TRUE(waited.get());
  EXPECT_EQ(clock.Now(), start);
}

TEST(ManualClockTest, AWaitForATimeAlreadyReachedReturnsAtOnce) {
  ManualClock clock;
  Waitable waitable;
  EXPECT_FALSE(waitable.Wait(clock, clock.Now()));
  waitable.done = true;
  EXPECT_TRUE(waitable.Wait(clock, clock.Now() - seconds(1)));
}

TEST(ManualClockTest, AwaitWaitersCountsTheThreadsWaitingAndTimesOutWithoutThem) {
  ManualClock clock;
  EXPECT_FALSE(clock.AwaitWaiters(1, milliseconds(20)));
  Waitable first, second;
  std::future<bool> a = std::async(std::launch::async, [&] { return first.Wait(clock, clock.Now() + seconds(1)); });
  std::future<bool> b = std::async(std::launch::async, [&] { return second.Wait(clock, clock.Now() + seconds(2)); });
  ASSERT_TRUE(clock.AwaitWaiters(2));
  EXPECT_FALSE(clock.AwaitWaiter(clock.Now() + seconds(3), milliseconds(20))) << "nobody waits for that time";
  clock.Advance(seconds(2));  // returns once both have seen it: both wake
  ASSERT_EQ(a.wait_for(seconds(10)), std::future_status::ready);
  ASSERT_EQ(b.wait_for(seconds(10)), std::future_status::ready);
  EXPECT_FALSE(a.get());
  EXPECT_FALSE(b.get());
}

TEST(ManualClockTest, ASleepEndsWhenTheClockHasMovedPastIt) {
  ManualClock clock;
  const Clock::TimePoint start = clock.Now();
  std::future<void> slept = std::async(std::launch::async, [&] { clock.SleepFor(milliseconds(500)); });
  ASSERT_TRUE(clock.AwaitWaiter(start + milliseconds(500)));
  clock.Advance(milliseconds(499));
  ASSERT_TRUE(clock.AwaitWaiter(start + milliseconds(500)));
  EXPECT_NE(slept.wait_for(milliseconds(0)), std::future_status::ready);
  clock.Advance(milliseconds(1));
  EXPECT_EQ(slept.wait_for(seconds(10)), std::future_status::ready);
}

TEST(RealClockTest, WaitsAndSleepsInRealTime) {
  const Clock& clock = RealClock();
  const auto start = std::chrono::steady_clock::now();
  Waitable waitable;
  EXPECT_FALSE(waitable.Wait(clock, clock.Now() + milliseconds(20)));
  clock.SleepFor(milliseconds(20));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(40));
  EXPECT_GE(clock.Now(), start + milliseconds(40));
}

}  // namespace
}  // namespace rung::agent
