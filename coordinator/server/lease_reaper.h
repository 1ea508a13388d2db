// coordinator/server/lease_reaper.h
//
// Lease expiry: a background thread that calls TrialLifecycle::ExpireLeases whenever the earliest
// live lease's expiry (TrialLifecycle::NextLeaseExpiry) has passed on the store's Clock, so that a
// trial whose worker vanished goes STALE -> PENDING with its next attempt.
//
// The thread sleeps on a condition variable until that expiry (as the Clock sees it, at most
// kMaxSleep at a time, in case the clock jumps), or until Poke() says the earliest expiry may have
// moved earlier (a lease was granted). A ManualClock does not move by itself: whoever moves it calls
// ExpireDue() (tests, and the Lease and Heartbeat RPCs, which run it first), so nothing ever sleeps
// to a result. ExpireDue() is cheap when nothing is due: one indexed read.
//
// Example:
//   LeaseReaper reaper(trials, clock, [&] { notifier.Notify(); });
//   reaper.Start();
//   ...
//   reaper.Stop();  // also in the destructor
//
// Thread safety: every method may be called from any thread; Start and Stop once each.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "coordinator/store/clock.h"
#include "coordinator/store/trial_lifecycle.h"

namespace rung::server {

class LeaseReaper {
 public:
  static constexpr std::chrono::seconds kMaxSleep{30};

  // `on_expired` runs after leases were expired (their trials are PENDING again).
  // REQUIRES: `trials` and `clock` outlive the reaper.
  LeaseReaper(TrialLifecycle& trials, const Clock& clock, std::function<void()> on_expired);
  ~LeaseReaper();
  LeaseReaper(const LeaseReaper&) = delete;
  LeaseReaper& operator=(const LeaseReaper&) = delete;

  void Start();
  void Stop();

  // Expires every live lease whose expiry the clock has passed; returns the attempts it expired.
  StatusOr<std::vector<AttemptKey>> ExpireDue();

  // The earliest expiry may have moved earlier: the thread looks again.
  void Poke();
  // A lease expiring at `expires_at` was granted: the thread looks again only if that is before
  // the time it plans to wake at (a fresh lease usually expires after every live one: no wake-up,
  // no query, per lease granted).
  void Poke(Timestamp expires_at);

 private:
  void Run();

  TrialLifecycle& trials_;
  const Clock& clock_;
  std::function<void()> on_expired_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool poked_ = false;     // guarded by mutex_
  // When (on the clock) the sleeping thread wakes by itself; min() while it is awake or starting.
  Timestamp planned_wake_ = Timestamp::min();  // guarded by mutex_
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace rung::server
