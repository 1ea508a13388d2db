// coordinator/store/event_log.h
//
// The events table: every state change of a sweep or a trial, with who made it, when and why, written
// in the same transaction as the change itself (so the log and the states never disagree). EventLog
// reads it; the managers write it.
//
// Kinds:
//   sweep_submitted     a new sweep (to_state ACTIVE); reason counts its trials
//   sweep_resubmitted   a spec submitted again under the same name; reason says what changed
//   sweep_state         a sweep moved from_state -> to_state (pause, resume, cancel, failed, succeeded)
//   trial_state         a trial moved from_state -> to_state; attempt is the trial's attempt then
//   leases_reconciled   the coordinator restarted and gave every live lease a fresh period
//   worker_registered   a worker (re)registered; reason lists its resources
//   gang_reserved       a worker reserved a rank of a data-parallel trial's forming gang (gang_leases.h)
//   gang_released       a forming gang was released (timeout, a quiet worker, the trial not leasable)
//   trial_waiting       a PENDING trial the registered workers can never hold, and why (its state reason)
//
// Actors: "user:<name>" (what the caller of a user operation passed), "worker:<id>", "coordinator".
//
// Example:
//   EventLog events(store);
//   EventFilter filter;
//   filter.trial_id = trial_id;
//   StatusOr<std::vector<EventRecord>> history = events.List(filter);
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung {

namespace event_kind {
inline constexpr char kSweepSubmitted[] = "sweep_submitted";
inline constexpr char kSweepResubmitted[] = "sweep_resubmitted";
inline constexpr char kSweepState[] = "sweep_state";
inline constexpr char kTrialState[] = "trial_state";
inline constexpr char kLeasesReconciled[] = "leases_reconciled";
inline constexpr char kWorkerRegistered[] = "worker_registered";
inline constexpr char kWorkerQuarantined[] = "worker_quarantined";
inline constexpr char kWorkerReleased[] = "worker_released";
inline constexpr char kTuneDecision[] = "tune_decision";      // the search added a value to a cell
inline constexpr char kTuneCellClosed[] = "tune_cell_closed"; // a cell closed, bracketed or not
inline constexpr char kTuneComplete[] = "tune_complete";      // every cell closed: the search is over
inline constexpr char kEarlyStop[] = "early_stop";            // a trial stopped early, and why
inline constexpr char kPrecisionDecision[] = "precision_decision";  // a precision aim added seeds, and why
inline constexpr char kPrecisionComplete[] = "precision_complete";  // the aim closed: met, budget or no_fit
}  // namespace event_kind

struct EventFilter {
  std::optional<int64_t> sweep_id;
  std::optional<int64_t> trial_id;
  int64_t after_id = 0;  // events with a larger id only: for following the log
  int64_t limit = 1000;
};

class EventLog {
 public:
  explicit EventLog(Store& store) : store_(store) {}

  // Events matching `filter`, oldest first.
  StatusOr<std::vector<EventRecord>> List(const EventFilter& filter) const;

 private:
  Store& store_;
};

}  // namespace rung
