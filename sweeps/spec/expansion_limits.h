// sweeps/spec/expansion_limits.h
//
// How many trials one spec may expand to. Expansion resolves, validates and hashes every trial
// before anything is stored, so a spec that multiplies to 10^8 cells would take the memory and the
// minutes of 10^8 trials; the count (ladder rungs x the product of the axes' sizes, seeds being an
// axis) is known from the spec's structure, and checked, overflow-safe, before any cell is built.
// A random axis's `samples` is checked against the same limit before it is drawn.
//
// The limit belongs to whoever expands: `rung validate --max-trials N`, the coordinator's
// `--max-trials-per-submission N` (SubmitSweep and its dry run); both default to kDefaultMaxTrials.
//
// Example:
//   ExpansionLimits limits{.max_trials = 500000, .raise_with = "rung validate --max-trials N"};
//   StatusOr<ExpandedSweep> sweep = ExpandSweepSpecText(text, "spec.yaml", limits);
#pragma once

#include <cstdint>
#include <string>

namespace rung {

inline constexpr int64_t kDefaultMaxTrials = 100'000;
// The most a limit may be raised to: every trial of a spec is built in memory before any is stored,
// so a larger sweep is several specs (both flags refuse a higher value as bad input).
inline constexpr int64_t kMaxTrialsCeiling = 1'000'000;

struct ExpansionLimits {
  int64_t max_trials = kDefaultMaxTrials;
  // How the caller's user raises max_trials (a flag), named in the refusal.
  std::string raise_with = "rung validate --max-trials N";
};

// "more than the limit of 100000 trials (raise it with rung validate --max-trials N)".
std::string TrialLimitText(const ExpansionLimits& limits);

}  // namespace rung
