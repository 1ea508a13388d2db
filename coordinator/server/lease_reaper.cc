// coordinator/server/lease_reaper.cc
#include "coordinator/server/lease_reaper.h"

#include <algorithm>
#include <iostream>

namespace rung::server {
namespace {

constexpr std::chrono::seconds kRetryAfterError{1};

}  // namespace

LeaseReaper::LeaseReaper(TrialLifecycle& trials, const Clock& clock, std::function<void()> on_expired)
    : trials_(trials), clock_(clock), on_expired_(std::move(on_expired)) {}

LeaseReaper::~LeaseReaper() { Stop(); }

void LeaseReaper::Start() { thread_ = std::thread([this] { Run(); }); }

void LeaseReaper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LeaseReaper::Poke() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    poked_ = true;
  }
  wake_.notify_all();
}

void LeaseReaper::Poke(Timestamp expires_at) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (expires_at >= planned_wake_) return;  // it wakes before this lease could expire anyway
    poked_ = true;
  }
  wake_.notify_all();
}

StatusOr<std::vector<AttemptKey>> LeaseReaper::ExpireDue() {
  StatusOr<std::optional<Timestamp>> next = trials_.NextLeaseExpiry();
  if (!next.ok()) return next.status();
  if (!*next || **next > clock_.Now()) return std::vector<AttemptKey>();
  StatusOr<std::vector<AttemptKey>> expired = trials_.ExpireLeases();
  if (expired.ok() && !expired->empty() && on_expired_) on_expired_();
  return expired;
}

void LeaseReaper::Run() {
  while (true) {
    std::chrono::microseconds sleep = kMaxSleep;
    if (StatusOr<std::vector<AttemptKey>> expired = ExpireDue(); !expired.ok()) {
      std::cerr << "rung-coordinator: expiring leases failed: " << expired.status().ToString() << "\n";
      sleep = kRetryAfterError;
    } else if (StatusOr<std::optional<Timestamp>> next = trials_.NextLeaseExpiry(); !next.ok()) {
      std::cerr << "rung-coordinator: reading lease expiries failed: " << next.status().ToString() << "\n";
      sleep = kRetryAfterError;
    } else if (*next) {
      sleep = std::clamp<std::chrono::microseconds>(**next - clock_.Now(), std::chrono::microseconds(0), kMaxSleep);
    }
    std::unique_lock<std::mutex> lock(mutex_);
    planned_wake_ = poked_ ? Timestamp::min() : clock_.Now() + sleep;
    wake_.wait_for(lock, sleep, [&] { return stopping_ || poked_; });
    planned_wake_ = Timestamp::min();
    if (stopping_) return;
    poked_ = false;
  }
}

}  // namespace rung::server
