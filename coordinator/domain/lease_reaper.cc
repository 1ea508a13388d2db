// coordinator/domain/lease_reaper.cc
#include "coordinator/domain/lease_reaper.h"

#include <algorithm>
#include <iostream>
#include <utility>

namespace rung {
namespace {

constexpr std::chrono::seconds kRetryAfterError{1};

}  // namespace

LeaseReaper::LeaseReaper(TrialLifecycle& trials, const Clock& clock, std::function<void()> housekeeping)
    : trials_(trials),
      clock_(clock),
      housekeeping_(std::move(housekeeping)),
      on_clock_moved_([this] { ExpireDueOrLog(); }) {
  clock_.Watch(&on_clock_moved_);
}

LeaseReaper::~LeaseReaper() {
  clock_.Unwatch(&on_clock_moved_);
  Stop();
}

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
  RUNG_ASSIGN_OR_RETURN(std::optional<Timestamp> next, trials_.NextLeaseExpiry());
  if (!next || *next > clock_.Now()) return std::vector<AttemptKey>();
  return trials_.ExpireLeases();
}

bool LeaseReaper::ExpireDueOrLog() {
  StatusOr<std::vector<AttemptKey>> expired = ExpireDue();
  if (!expired.ok()) {
    std::cerr << "rung-coordinator: expiring leases failed: " << expired.status().ToString() << "\n";
  }
  return expired.ok();
}

void LeaseReaper::Run() {
  while (true) {
    std::chrono::microseconds sleep = kMaxSleep;
    if (housekeeping_ && (last_housekeeping_ == Timestamp::min() || clock_.Now() - last_housekeeping_ >= kHousekeepingEvery)) {
      last_housekeeping_ = clock_.Now();
      housekeeping_();
    }
    if (!ExpireDueOrLog()) {
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

}  // namespace rung
