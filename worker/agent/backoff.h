// worker/agent/backoff.h
//
// Exponential backoff with jitter for calls to a coordinator that may be away: each Next() waits
// about `multiplier` times longer than the one before, up to `max`, each delay spread by +-20% so
// that many workers that lost the same coordinator do not come back in lockstep.
//
// Example:
//   Backoff backoff;                          // 200 ms, 400 ms, ... up to 10 s
//   while (!(status = Call()).ok() && IsTransient(status)) WaitFor(backoff.Next());
//   backoff.Reset();                          // after a success
//
// Thread safety: none; one owner.
#pragma once

#include <chrono>
#include <random>

namespace rung::agent {

struct BackoffPolicy {
  std::chrono::milliseconds initial{200};  // the first delay
  std::chrono::milliseconds max{10000};    // no delay is longer (before jitter)
  double multiplier = 2.0;                 // growth per delay, >= 1
};

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy = {});

  // The next delay (and grows the one after it).
  std::chrono::milliseconds Next();
  // Back to the initial delay (after a success).
  void Reset();

 private:
  BackoffPolicy policy_;
  double current_ms_;
  std::minstd_rand random_;
};

}  // namespace rung::agent
