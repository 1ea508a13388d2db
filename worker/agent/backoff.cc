// worker/agent/backoff.cc
#include "worker/agent/backoff.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace rung::agent {
namespace {

// A seed per Backoff: std::random_device once per process (it may ask the CPU through CPUID, which
// traps to the hypervisor in a VM), then a sequence of distinct seeds.
uint32_t NextSeed() {
  static std::atomic<uint32_t> next{std::random_device{}()};
  return next.fetch_add(0x9E3779B9u);
}

}  // namespace

Backoff::Backoff(BackoffPolicy policy)
    : policy_(policy), current_ms_(static_cast<double>(policy.initial.count())), random_(NextSeed()) {}

std::chrono::milliseconds Backoff::Next() {
  const double base = std::min(current_ms_, static_cast<double>(policy_.max.count()));
  current_ms_ = std::min(base * std::max(policy_.multiplier, 1.0), static_cast<double>(policy_.max.count()));
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  return std::chrono::milliseconds(static_cast<int64_t>(base * jitter(random_)));
}

void Backoff::Reset() { current_ms_ = static_cast<double>(policy_.initial.count()); }

}  // namespace rung::agent
