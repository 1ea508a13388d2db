// coordinator/domain/lease_reaper.h
//
// Lease expiry: a background thread that calls TrialLifecycle::ExpireLeases whenever the earliest
// live lease's expiry (TrialLifecycle::NextLeaseExpiry) has passed on the store's Clock, so that a
// trial whose worker vanished goes STALE -> PENDING with its next attempt.
//
// The thread sleeps on a condition variable until that expiry (as the Clock sees it, at most
// kMaxSleep at a time, in case the clock jumps), or until Poke() says the earliest expiry may have
// moved earlier (a lease was granted). The reaper watches its Clock (clock.h): when a ManualClock is
// moved, ExpireDue() runs at once in the thread that moved it, so tests never sleep to a result and
// no RPC has to expire leases for them. ExpireDue() is cheap when nothing is due: one indexed read.
//
// Example:
//   LeaseReaper reaper(trials, clock);
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
#include "coordinator/domain/trial_lifecycle.h"

namespace rung {

class LeaseReaper {
 public:
  static constexpr std::chrono::seconds kMaxSleep{30};

  // TrialLifecycle::ExpireLeases signals the trials it requeued (WorkQueued).
  // REQUIRES: `trials` and `clock` outlive the reaper.
  // `housekeeping` (may be empty) runs on the reaper's thread at most once per kHousekeepingEvery of
  // the clock, for what must be retried without a caller (the coordinator's pending decisions).
  static constexpr std::chrono::seconds kHousekeepingEvery{30};
  LeaseReaper(TrialLifecycle& trials, const Clock& clock, std::function<void()> housekeeping = {});
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
  // ExpireDue, its error logged (the thread and the clock's watcher have no caller to return it to).
  bool ExpireDueOrLog();
  void Run();

  TrialLifecycle& trials_;
  const Clock& clock_;
  const std::function<void()> housekeeping_;
  Timestamp last_housekeeping_ = Timestamp::min();  // the reaper thread's
  const std::function<void()> on_clock_moved_;  // watches clock_
  std::mutex mutex_;
  std::condition_variable wake_;
  bool poked_ = false;     // guarded by mutex_
  // When (on the clock) the sleeping thread wakes by itself; min() while it is awake or starting.
  Timestamp planned_wake_ = Timestamp::min();  // guarded by mutex_
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace rung
