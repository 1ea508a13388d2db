// sweeps/tune/lr_search.h
//
// The learning-rate search of a `tune` block (sweeps/spec/tune_spec.h; docs/science.md section 10):
// which trials of a sweep should exist, given the ones that do and how they ended. A pure function
// of its inputs, so that the coordinator can run it again after any restart and make the same
// decisions: a trial it planned before is planned again (same identity), never a second time.
//
// Tuning cells. The expanded cells (every rung x axis combination, the tuned key at its expanded
// value) are grouped by the `per` keys ("rung" and axis keys; default every axis but seed, and the
// rung). A cell's members are its cells of the first seed (`seeds: first`; the first seed the
// expansion lists) or of every seed (`seeds: all`); its followers are the other seeds' cells, run at
// the best value once the cell is closed.
//
// The search per cell, over the grid index i (value anchor * ratio^i):
//   - start: the centre index c and (start-1)/2 indices on each side, every member at each;
//   - a value is scored when all its members ended: the mean of their final metric (negated when
//     the goal is maximize); a value with a member that diverged, ended non-finite, failed for good
//     or was stopped by ASHA ranks after every scored value (ASHA never gives the best);
//   - best: the lowest score, ties (and a cell of no score) to the smaller index;
//   - while a member runs, the cell waits; then: bracketed when best-1 and best+1 were tried; else
//     exhausted when max_points values were tried, or when the neighbour beyond the best is not a
//     valid value of the trial config (a probability above 1); else that neighbour is added.
//
// Across rungs (methods: the cell's keys but the rung, when `per` holds the rung): with `predict:
// power_law` the k-th swept rung of a method starts once min(2, k) of its smaller rungs are closed,
// centred on their best index (one) or the least-squares line of best index against ln N_total
// (two or more), rounded and kept within [MinIndex + h, MaxIndex - h] (h = (start-1)/2: every value
// float32 holds, tune_spec.h), then moved to the nearest index whose first values the trial config
// takes for every member (a smaller rung may have closed on the edge of what it takes); with `predict: none` every cell starts at once on its centre. Rungs after
// `extrapolate_above` are not searched: every seed runs at the predicted index (lr_extrapolated).
//
// Example:
//   StatusOr<TuningPlan> plan = PlanTuning(expanded, observed);
//   for (const PlannedTrial& trial : plan->trials) ... submit trial.trial if its identity is new ...
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "sweeps/spec/expansion.h"

namespace rung {

// How a trial of the sweep stands, for the search.
enum class TunedOutcome {
  kRunning,        // not ended yet (pending, leased, running, requeued, cancelled)
  kFinished,       // ended with its final metric (SUCCEEDED)
  kDiverged,       // stopped for divergence, a non-finite loss, or FAILED for good
  kStoppedByAsha,  // stopped by successive halving
};

// A trial of the sweep as the store has it.
struct ObservedTrial {
  std::string identity;
  std::string rung_label;
  nlohmann::json assignments = nlohmann::json::object();  // with the tuned key's value
  TunedOutcome outcome = TunedOutcome::kRunning;
  std::optional<double> metric;  // the final value of the sweep's metric, if any
  int64_t order = 0;             // when it was added (the trial index): the earliest are the start values
};

enum class CellStatus {
  kWaiting,       // not started: its rung waits on smaller rungs of its method
  kSearching,     // trials run, or the next value is being added
  kBracketed,     // closed: the best has a tried value on each side
  kExhausted,     // closed: max_points values tried, the best on an edge
  kExtrapolated,  // not searched: runs at the index predicted from smaller rungs
  kFromSweep,     // not searched: the best value of another sweep's cell
};
const char* CellStatusName(CellStatus status);  // "waiting", "searching", "bracketed", ...

// One value tried in a cell.
struct TriedValue {
  int64_t index = 0;
  double value = 0;
  std::optional<double> metric;  // the members' mean final metric, when every member finished
  std::string state;             // "finished", "unfinished", "diverged", "stopped_by_asha"
};

struct TuningCellReport {
  int64_t id = 0;                 // position in TuningPlan::cells
  nlohmann::json cell = nlohmann::json::object();  // the per keys' values ("rung": its label)
  std::string method;             // the cell's keys but the rung, as JSON text (methods share it)
  std::string rung_label;         // "" when the cell spans rungs
  int64_t rung = -1;
  double n_total = 0;             // the members' mean parameter count, positional excluded
  CellStatus status = CellStatus::kWaiting;
  std::vector<TriedValue> tried;  // by index
  std::optional<int64_t> best_index;
  std::optional<double> best_value;
  std::optional<int64_t> center_index;  // where it starts or started (the middle of its first values), or runs
  std::optional<int64_t> next_center;   // the next rung's predicted centre, from the closed rungs up to this one
  std::string reason;             // why it stands where it stands, in words
  int64_t members = 0;            // cells searched at each value
  int64_t followers = 0;          // cells run at the best once closed
  bool closed() const {
    return status == CellStatus::kBracketed || status == CellStatus::kExhausted ||
           status == CellStatus::kExtrapolated || status == CellStatus::kFromSweep;
  }
  bool bracketed() const { return status == CellStatus::kBracketed; }
};

// A trial the plan wants to exist.
struct PlannedTrial {
  ExpandedTrial trial;   // the tuned key set; its assignments name the value
  int64_t cell = 0;      // TuningPlan::cells index
  int64_t grid_index = 0;
  bool extrapolated = false;
};

struct TuningPlan {
  std::vector<TuningCellReport> cells;
  std::vector<PlannedTrial> trials;  // every trial the search has asked for so far, cell by cell
  // The most trials the search can take: max_points values per searched cell x its members, plus
  // its followers, plus every cell of an extrapolated rung; and their 6ND FLOPs.
  int64_t worst_case_trials = 0;
  double worst_case_flops = 0;
  bool complete() const;  // every cell closed (the sweep can finish)
};

// The plan for `expanded` (ExpandSweepSpec of a spec with a tune block) given the sweep's trials
// `observed` (those whose identity is not one the plan makes are ignored). `best_from`, for
// `from_sweep`: per cell (by TuningCellReport::cell) the grid index to run at; a cell missing there
// is an error. Errors: INVALID_ARGUMENT for a tuned value the trial config refuses (naming the
// value and the tune block's location), or a from_sweep cell without a best value.
StatusOr<TuningPlan> PlanTuning(const ExpandedSweep& expanded, const std::vector<ObservedTrial>& observed,
                                const std::vector<std::pair<nlohmann::json, int64_t>>* best_from = nullptr);

// The tuning cell of a trial of the sweep (its per keys' values, as TuningCellReport::cell), from its
// rung label and assignments.
nlohmann::json TuningCellOf(const TuneSpec& tune, const std::vector<std::string>& axis_keys,
                            const std::string& rung_label, const nlohmann::json& assignments);

// value = coefficient * N^exponent through (N, value) points by least squares in log-log: the law of a
// method's best tuned value against its rungs' size. nullopt with fewer than 2 distinct N.
struct ValueLaw {
  double coefficient = 0;
  double exponent = 0;
};
std::optional<ValueLaw> FitValueLaw(const std::vector<std::pair<double, double>>& n_and_value);

// The least-squares line of `y` against `x` evaluated at `at` (one point: its y). REQUIRES: x, y
// the same non-zero size.
double LineThrough(const std::vector<double>& x, const std::vector<double>& y, double at);

}  // namespace rung
