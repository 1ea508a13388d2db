// sweeps/fit/precision_aim.h
//
// The decisions of a precision-aimed sweep (the spec's `precision` block, sweeps/spec/precision_spec.h;
// docs/science.md section 6.6): given the ladder's finished runs and the trials the sweep has, which
// seeds to add next, or whether the aim is met or its budget spent. A pure function of its inputs, so
// that the coordinator takes the same decision after any restart and never twice (a trial it adds is
// identified by its cell and seed, and the trials it added count as unfinished until they end).
//
// The fit reads the finished runs of the (label, seed) pairs whose every run has ended with a run: a
// variant's run whose baseline pair is still running (or failed) would read the seed-to-seed spread
// that pairing removes.
//
// Rows: every variant but the baseline at every label of `at` (all labels when empty), read from
// ComputeMultipliers' rows of the target's estimator; a row's half width is (high - low) / 2 of its
// interval, none when it has no interval or an open one. A row is met when its half width is at most
// the target.
//
// Projection: each row's interval as it is expected to be once the unfinished trials end. The
// interval's variance is the stratified jackknife's sum over ladder labels (MultiplierRow::gap_strata);
// a stratum of m seeds with k more is expected to shrink by m / (m + k) (its seed means' variance),
// the degrees of freedom follow as the interval takes them (GapDegreesOfFreedom), and the half width scales by
// sqrt(V' / V) t(df') / t(df). The seeds counted at a label are those of the cells the row reads
// there: the baseline's, and the row's own variant's at the row's label.
//
// A decision, while fewer than `in_flight` trials of the sweep are unfinished:
//   1. the widest row (largest projected half width; a row without an interval is the widest) that
//      is not projected to meet the target;
//   2. its candidates: one more seed at the row's label (the variant's run and, when the baseline
//      lacks that seed there, the baseline's) or at another label its interval reads (the baseline's
//      run); each scored by the expected reduction of the row's half width per FLOP of the trials it
//      adds (a row with an open interval, which has no half width: the share of its gap variance
//      sum_l V_l the seed is expected to remove, per FLOP, over the same candidates; a row without
//      an interval: only its own label);
//   3. the best candidate that fits the budget (planned FLOPs of every trial, the first design's
//      included, at most budget_flops) is added; when none fits, the aim closes on the budget (or
//      waits, while trials run that may still meet it).
// Closed as met when no trial is unfinished and every row is met. A new seed is the smallest seed id
// the cell has not used (a seed the baseline already ran there pairs with it at no cost).
//
// Example:
//   StatusOr<AimDecision> decision = AimPrecision(state, target);
//   for (const AimAddition& added : decision->additions) ... add (variant, label, seed) ...
//
// Thread safety: a function of its arguments.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/ladder_results.h"

namespace rung::fit {

struct PrecisionTarget {
  Estimator estimator = Estimator::kHermite;
  double half_width = 0;           // the target: (high - low) / 2, multiplier units; > 0
  double level = 0.95;             // of the intervals
  std::vector<std::string> at;     // labels whose rows are targets; empty: every label
  double budget_flops = 0;         // > 0
  int64_t in_flight = 2;           // trials unfinished at once, at most, when one is added; >= 1
};

// One (variant, label) cell of the sweep: what one more trial there costs, and its seeds.
struct AimCell {
  std::string variant;
  std::string label;
  double trial_flops = 0;      // one trial's FLOPs (6 N D)
  std::set<int64_t> seeds;     // of every trial of the cell but the cancelled, whatever its state
  std::set<int64_t> unfinished;  // of those, the seeds not ended yet
  // Of those, the seeds that ended without a run of the ladder (FAILED for good, stopped early, or
  // SUCCEEDED without the metric): never coming, and their pairs left out of the fit.
  std::set<int64_t> ended_without_run;
};

struct AimState {
  LadderResults ladder;      // the finished runs, with seeds
  std::string baseline;      // a variant of the cells
  std::vector<AimCell> cells;
  double planned_flops = 0;  // FLOPs of every trial of the sweep, whatever its state
  int64_t unfinished = 0;    // trials of the sweep not ended
};

struct AimRow {
  std::string variant;
  std::string label;
  std::optional<double> multiplier;
  std::optional<Interval> interval;
  std::optional<double> half_width;  // empty: no interval, or an open one
  std::optional<double> projected;   // expected once the unfinished (and added) trials end
  int seeds = 0;                     // runs behind the row's point
  bool met = false;
  std::string note;                  // why there is no interval
};

struct AimAddition {
  std::string variant;
  std::string label;
  int64_t seed = 0;
  double flops = 0;
  std::string why;  // the row it narrows: its half width now, expected after, per FLOP
};

enum class AimStatus {
  kWaiting,  // nothing to add now: trials run (or no fit yet) that decide the next step
  kAiming,   // trials added
  kMet,      // closed: every row met, nothing unfinished
  kBudget,   // closed: the widest row's cheapest addition does not fit the budget, nothing unfinished
  kNoFit,    // closed: nothing unfinished and the ladder gives no fit (its error says why)
};
const char* AimStatusName(AimStatus status);  // "waiting", "aiming", "met", "budget", "no_fit"
bool IsClosed(AimStatus status);              // met, budget, no_fit

struct AimDecision {
  AimStatus status = AimStatus::kWaiting;
  std::string why;
  std::vector<AimRow> rows;  // by variant, then label, in the ladder's order
  std::vector<AimAddition> additions;
  double planned_flops = 0;  // with the additions
  std::string intervals;     // the fit's account of its intervals (MultiplierReport::intervals)
};

// INVALID_ARGUMENT for a bad target (half width, level, budget, in_flight) or a baseline that is not a
// variant of the cells. A ladder that does not fit yet is not an error: the decision waits (or closes
// as no_fit with nothing unfinished).
StatusOr<AimDecision> AimPrecision(const AimState& state, const PrecisionTarget& target);

}  // namespace rung::fit
