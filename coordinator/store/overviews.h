// coordinator/store/overviews.h
//
// Read models for the user API: a sweep with its trial counts, FLOPs and why it is in its state; a
// trial with its newest attempt, progress, sweep metric and why it is in its state. Each list is
// read under the store's mutex, so it shows one state of the database; pages are cut by id (sweeps,
// newest first) or trial index (trials), so a page token stays valid while rows are added.
//
// Example:
//   Overviews overviews(store);
//   StatusOr<std::vector<TrialOverview>> running =
//       overviews.Trials(sweep_id, {{TrialState::kLeased, TrialState::kRunning}});
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung {

struct SweepFilter {
  std::vector<SweepState> states;  // empty: any
  std::string name;                // "": any
  int64_t before_id = 0;           // > 0: only sweeps with a smaller id (the next page)
  int64_t limit = 100;
};

struct TrialFilter {
  std::vector<TrialState> states;  // empty: any
  int64_t after_index = -1;        // only trials with a larger trial_index (the next page)
  int64_t limit = 1000;
};

class Overviews {
 public:
  explicit Overviews(Store& store) : store_(store) {}

  StatusOr<SweepOverview> Sweep(int64_t sweep_id) const;  // NOT_FOUND
  // Newest first.
  StatusOr<std::vector<SweepOverview>> Sweeps(const SweepFilter& filter = {}) const;

  StatusOr<TrialOverview> Trial(int64_t trial_id) const;  // NOT_FOUND
  // By trial_index. NOT_FOUND for an unknown sweep.
  StatusOr<std::vector<TrialOverview>> Trials(int64_t sweep_id, const TrialFilter& filter = {}) const;

 private:
  Store& store_;
};

}  // namespace rung
