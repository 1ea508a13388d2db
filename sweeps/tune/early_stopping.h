// sweeps/tune/early_stopping.h
//
// Whether a running trial should stop early (sweeps/spec/early_stop_spec.h), from its stored
// evaluations and, for successive halving, those of its tuning cell. Pure: the coordinator calls it
// after every committed batch and again after a restart, and records what it decided.
//
//   divergence  an evaluation of val_loss above factor x the trial's first one (or not finite)
//   asha        at each fraction f of `at`, the trial's value is its first evaluation of the metric
//               at or after f x its training tokens; among the cell's trials that reached f (at
//               least `reduction` of them), those outside the best max(1, floor(n / reduction)) stop.
//               Lower is better; a trial ranks after every trial with a lower value and after the
//               earlier trials (by position in `cell`) with the same one.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweeps/spec/early_stop_spec.h"

namespace rung {

struct Evaluation {
  int64_t step = 0;
  int64_t tokens = 0;
  double value = 0;
};

// A trial as early stopping sees it: its evaluations of the metrics concerned, by step.
struct EvaluatedTrial {
  int64_t trial_id = 0;
  int64_t total_tokens = 0;             // tokens of the whole run
  std::vector<Evaluation> val_loss;     // for divergence
  std::vector<Evaluation> asha_metric;  // for successive halving (the same series when the metric is val_loss)
};

struct EarlyStopDecision {
  std::string reason;     // "diverged" or "asha"
  std::string metric;     // the metric that decided
  double value = 0;       // its value that decided
  double compared_to = 0; // the first evaluation x factor, or the worst value kept
  int64_t step = 0;       // the step of `value`
  std::string detail;     // the decision in words, for the trial's state reason
};

// Divergence alone (any sweep can ask for it).
std::optional<EarlyStopDecision> DivergenceDecision(const DivergenceStop& stop, const EvaluatedTrial& trial);

// Successive halving of `cell[which]` among `cell` (the trials of one tuning cell, finished and
// running, in a stable order). REQUIRES: which < cell.size().
std::optional<EarlyStopDecision> AshaDecision(const AshaStop& stop, const std::vector<EvaluatedTrial>& cell,
                                              size_t which);

}  // namespace rung
