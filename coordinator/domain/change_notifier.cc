// coordinator/server/change_notifier.cc
#include "coordinator/domain/change_notifier.h"

namespace rung {

uint64_t ChangeNotifier::generation() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return generation_;
}

int ChangeNotifier::waiters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiters_;
}

bool ChangeNotifier::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

void ChangeNotifier::Notify() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++generation_;
  }
  changed_.notify_all();
}

void ChangeNotifier::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

uint64_t ChangeNotifier::WaitForChange(uint64_t seen, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++waiters_;
  changed_.wait_until(lock, deadline, [&] { return closed_ || generation_ != seen; });
  --waiters_;
  return generation_;
}

}  // namespace rung
