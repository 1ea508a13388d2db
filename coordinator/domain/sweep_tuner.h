// coordinator/domain/sweep_tuner.h
//
// The coordinator's side of a spec's `tune` and `early_stop` blocks: it adds the trials the
// learning-rate search asks for as results arrive (sweeps/tune/lr_search.h), and stops trials early
// from their stored evaluations (sweeps/tune/early_stopping.h).
//
// Decisions are durable and idempotent. The search is a pure function of the stored trials, so a
// decision is the difference between what the plan asks for and what the sweep has: Decide() adds
// those trials, or closes the search, in one transaction with an event row (kind tune_decision)
// naming its inputs (each cell's tried values and metrics). A coordinator that dies after a result
// committed and before the decision it triggers takes the same decision when DecideAll() runs at
// its next start; one that dies after the decision finds nothing left to add: a trial the plan asked
// for is identified by its identity and inserted once. While the search is open (sweep.tuning =
// "searching") the sweep cannot finish (transitions.h), so `rung run` waits on a pending decision.
//
// Early stops are decided the same way: from the stored evaluations of the trial and of the trials
// of its tuning cell with its seed (successive halving compares values, not seeds), in one transaction that ends the trial EARLY_STOPPED (its worker learns it from the next
// heartbeat, like a cancel) with an event (kind early_stop) naming the metric, its value, the
// step and what it was compared against; ConsiderEarlyStopAll() runs them again after a restart.
//
// Crash points (crash_point.h): tuner.before_decision, tuner.after_decision, early_stop.before_stop.
//
// Example (what the coordinator does after an attempt ended and after a batch committed):
//   SweepTuner tuner(store, &signals);
//   RUNG_RETURN_IF_ERROR(tuner.Decide(trial.sweep_id));
//   RUNG_RETURN_IF_ERROR(tuner.ConsiderEarlyStop(batch.trial_id));
//
// Thread safety: thread-safe (the store serializes the transactions; the spec cache has a mutex).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/domain/change_signals.h"
#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/tune/lr_search.h"

namespace rung {

inline constexpr char kTuningSearching[] = "searching";
inline constexpr char kTuningComplete[] = "complete";

// Whether a sweep in `state` takes adaptive decisions (the search's, a precision aim's): ACTIVE or PAUSED.
inline bool TakesDecisions(SweepState state) { return state == SweepState::kActive || state == SweepState::kPaused; }

class SweepTuner {
 public:
  // `signals` (may be null) must outlive the tuner.
  explicit SweepTuner(Store& store, ChangeSignals* signals = nullptr) : store_(store), signals_(signals) {}

  // The sweep's spec, expanded (cached by spec hash). INVALID_ARGUMENT when the stored spec no longer
  // expands (a build that reads specs differently).
  StatusOr<std::shared_ptr<const ExpandedSweep>> SpecOf(const SweepRecord& sweep) const;

  // The sweep's trials as the search sees them (states, final values of the sweep's metric).
  static StatusOr<std::vector<ObservedTrial>> ObserveIn(Tables& tables, const SweepRecord& sweep);

  // The search of `expanded` over the trials of the sweep named `sweep_name` (none yet: an empty
  // store), with `from_sweep` resolved: what a submission of the spec asks for.
  StatusOr<TuningPlan> PlanForSubmission(const ExpandedSweep& expanded, const std::string& sweep_name) const;

  // The sweep's search as it stands (`rung tune`). FAILED_PRECONDITION for a sweep without one.
  StatusOr<TuningPlan> Plan(int64_t sweep_id) const;

  // Takes the sweep's pending decisions: adds the trials its search asks for, or closes the search
  // when every cell is closed. Nothing for a sweep without an open search, or one that is not ACTIVE
  // or PAUSED. Returns how many trials it added.
  StatusOr<int64_t> Decide(int64_t sweep_id);
  // Decide() for every sweep whose search is open (after a start).
  Status DecideAll();

  // Stops early the live trials of `trial_id`'s tuning cell (or the trial alone, for divergence)
  // that the sweep's early_stop block says should stop; then Decide() when one did. Nothing for a
  // sweep without early_stop. Returns how many it stopped.
  StatusOr<int64_t> ConsiderEarlyStop(int64_t trial_id);
  // ConsiderEarlyStop() for every live trial of a sweep with an early_stop block (after a start).
  Status ConsiderEarlyStopAll();

 private:
  StatusOr<std::optional<std::vector<std::pair<nlohmann::json, int64_t>>>> BestFromSweep(
      const ExpandedSweep& expanded) const;

  Store& store_;
  ChangeSignals* const signals_;
  mutable std::mutex cache_mutex_;
  mutable std::map<std::string, std::shared_ptr<const ExpandedSweep>> spec_cache_;  // by spec hash
};

}  // namespace rung
