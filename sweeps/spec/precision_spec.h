// sweeps/spec/precision_spec.h
//
// The `precision` block: a sweep that aims at the width of its compute multipliers' intervals. The
// spec's seeds are the first design; after every trial ends the coordinator refits the ladder and
// adds a seed where it narrows the widest target interval most per FLOP, until every target is met
// or the budget is spent (sweeps/fit/precision_aim.h decides; docs/science.md section 6.6).
//
//   precision:
//     estimator: hermite            # whose intervals: hermite | power_law_shared_e | power_law_free_e
//     target_half_width: 0.01       # (high - low) / 2 of each target interval, multiplier units
//     level: 0.95                   # of the intervals
//     at: all                       # the rung labels whose multipliers are targets, or all
//     budget_flops: 1e15            # the most FLOPs (6 N D) the sweep's trials may plan, the first design's included
//     add: [seed]                   # what the coordinator adds: seeds (the only kind)
//     in_flight: 2                  # the most trials unfinished at once when it adds one
//
// Every variant but the baseline is a target at each label of `at`. The piecewise estimator is
// refused: its chord bias is fixed while its interval narrows with every seed added, so an aimed
// interval would be narrow around the wrong value. Every error names file:line:col.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/yaml_document.h"
#include "sweeps/spec/spec_diagnostics.h"

namespace rung {

// The most trials a precision aim keeps unfinished at once (one decision adds at most this many).
inline constexpr int64_t kMaxPrecisionInFlight = 1024;

struct PrecisionSpec {
  bool set = false;
  std::string estimator = "hermite";
  double target_half_width = 0;  // > 0
  double level = 0.95;           // in (0, 1)
  std::vector<std::string> at;   // rung labels; empty: every label
  double budget_flops = 0;       // > 0
  int64_t in_flight = 2;         // >= 1
  std::string location;          // the block's file:line:col
};

// The estimators a precision block may aim with, in the order errors list them.
const std::vector<std::string>& PrecisionEstimators();

// Parses the spec's `precision` block (key path "precision"); null: none (set = false).
PrecisionSpec ParsePrecisionSpec(const nlohmann::json* block, const ConfigDocument& document,
                                 SpecDiagnostics* diagnostics);

}  // namespace rung
