// worker/agent/backoff.cc
#include "worker/agent/backoff.h"

#include <algorithm>

namespace rung::agent {

Backoff::Backoff(BackoffPolicy policy)
    : policy_(policy), current_ms_(static_cast<double>(policy.initial.count())), random_(std::random_device{}()) {}

std::chrono::milliseconds Backoff::Next() {
  const double base = std::min(current_ms_, static_cast<double>(policy_.max.count()));
  current_ms_ = std::min(base * std::max(policy_.multiplier, 1.0), static_cast<double>(policy_.max.count()));
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  return std::chrono::milliseconds(static_cast<int64_t>(base * jitter(random_)));
}

void Backoff::Reset() { current_ms_ = static_cast<double>(policy_.initial.count()); }

}  // namespace rung::agent
