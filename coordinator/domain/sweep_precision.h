// coordinator/domain/sweep_precision.h
//
// The coordinator's side of a spec's `precision` block (sweeps/spec/precision_spec.h): after every
// attempt ending it refits the sweep's ladder and adds the seeds sweeps/fit/precision_aim.h asks for,
// until every target interval is met or the budget is spent; then it records which, and why.
//
// Decisions are durable and idempotent, as the learning-rate search's are (sweep_tuner.h): a decision
// is a function of committed state (the sweep's trials and their final metric), taken in one
// transaction with an event row (kind precision_decision) naming the row it narrows, its half width,
// the half width expected after and the FLOPs; a trial it adds is identified by its identity (its
// cell and seed), so a decision repeated after a restart adds nothing twice, and the seeds it added
// count as unfinished until they end. A cancelled trial counts as never run: when the aim asks for its
// seed again (a sweep cancelled with seeds the aim added, then resubmitted) that trial is requeued. The fit runs outside the transaction; the transaction checks
// that the sweep's trials are as the fit saw them (else the decision is taken again). While the aim
// is open (sweep.precision = "aiming") the sweep cannot finish (transitions.h), so `rung run` waits
// on a decision a crash left pending; DecideAll() takes it at the next start. The close (met, budget,
// no_fit) sets sweep.precision and writes a precision_complete event in the same transaction.
//
// A tuned sweep (a `tune` block too) aims once its search is complete, on its best points: the ladder
// is the one `rung fit` reads (sweep_fits.h), and an added seed runs at its cell's best value.
// A resubmission sets the aim open again; the seeds it added are kept (sweep_manager.h).
//
// Crash points (crash_point.h): precision.before_decision, precision.after_decision.
//
// Thread safety: thread-safe (the store serializes the transactions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/domain/change_signals.h"
#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"
#include "sweeps/fit/precision_aim.h"
#include "sweeps/spec/precision_spec.h"

namespace rung {

class Coordinator;

inline constexpr char kPrecisionAiming[] = "aiming";

// A precision-aimed sweep as it stands (`rung precision`, the dashboard's panel).
struct PrecisionReport {
  SweepRecord sweep;
  PrecisionSpec spec;
  std::string baseline;             // the variant the multipliers are against
  fit::AimDecision now;             // the rows, their projection, and the decision the state gives
  std::vector<fit::AimAddition> next;  // what the aim adds when a trial slot frees (none once closed)
  std::string closed_reason;        // the precision_complete event's reason, once closed
  int64_t unfinished = 0;           // trials of the sweep not ended
};

class SweepPrecision {
 public:
  // REQUIRES: `store`, `coordinator` (whose store it is) and `signals` (may be null) outlive this.
  SweepPrecision(Store& store, Coordinator& coordinator, ChangeSignals* signals)
      : store_(store), coordinator_(coordinator), signals_(signals) {}

  // FAILED_PRECONDITION for a sweep without a precision block; NOT_FOUND; the ladder's errors.
  StatusOr<PrecisionReport> Report(int64_t sweep_id);

  // Takes the sweep's pending decision: adds the seeds the aim asks for, or closes it. Nothing for a
  // sweep whose aim is not open, that is not ACTIVE or PAUSED, or whose search is still open.
  // Returns how many trials it added.
  StatusOr<int64_t> Decide(int64_t sweep_id);
  // Decide() for every sweep whose aim is open (after a start, and from the reaper).
  Status DecideAll();

 private:
  Store& store_;
  Coordinator& coordinator_;
  ChangeSignals* const signals_;
};

}  // namespace rung
