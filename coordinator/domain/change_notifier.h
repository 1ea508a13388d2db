// coordinator/domain/change_notifier.h
//
// A generation counter with a condition variable: writers Notify() after they committed a change,
// waiters block until the generation moves past the one they saw (or a deadline passes, or the
// notifier is closed at shutdown). Long-polls (WorkerService.Lease) and streams wait on one
// instead of polling the store.
//
// A waiter reads generation() before it looks at the store and waits for a change after that
// generation, so a change committed between the look and the wait is never missed.
//
// Example:
//   uint64_t seen = notifier.generation();
//   while (!FoundWork()) {
//     seen = notifier.WaitForChange(seen, deadline);
//     if (notifier.closed() || std::chrono::steady_clock::now() >= deadline) break;
//   }
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace rung {

class ChangeNotifier {
 public:
  uint64_t generation() const;
  bool closed() const;
  // How many callers wait in WaitForChange now (monitoring, tests).
  int waiters() const;

  // Moves the generation and wakes every waiter.
  void Notify();
  // Wakes every waiter for good (shutdown); later waits return at once.
  void Close();

  // Blocks until the generation differs from `seen`, the notifier is closed, or `deadline` passes;
  // returns the generation then.
  uint64_t WaitForChange(uint64_t seen, std::chrono::steady_clock::time_point deadline);

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t generation_ = 0;  // guarded by mutex_
  bool closed_ = false;      // guarded by mutex_
  int waiters_ = 0;          // guarded by mutex_
};

}  // namespace rung
