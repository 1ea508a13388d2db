// coordinator/store/sweep_results.h
//
// What a sweep's finished and running trials measured, read for results tables, exports and fits
// (the user API's QueryResults, Export and Fit): each trial with its summaries, its newest
// provenance and worker, and the curves of one metric over the whole sweep. Reads only.
//
// Pages are cut by trial index like Overviews::Trials, so an export can walk a large sweep a page
// at a time without holding the store's mutex for the whole of it.
//
// Example:
//   SweepResults results(store);
//   StatusOr<std::vector<TrialResult>> trials = results.Trials(sweep_id);
//   for (const TrialResult& trial : *trials) {
//     if (auto loss = trial.summaries.find("val_loss"); loss != trial.summaries.end()) ...;
//   }
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung {

// One trial and what it reported as results.
struct TrialResult {
  TrialRecord trial;
  std::string worker_id;      // the worker of its newest attempt; "" before the first lease
  nlohmann::json provenance;  // the newest attempt's provenance record that was reported; null if none
                              // (or not read: ProvenanceRead::kSkip)
  std::map<std::string, double> summaries;  // summaries table: name -> value (NaN where not finite)
};

// One point of a trial's curve: each step from the newest attempt that reported it.
struct StepValue {
  int64_t step = 0;
  double value = 0;  // NaN where not finite
};

// Whether SweepResults::Trials reads each trial's provenance: exports show it; results tables and
// fits never read it, and skip a JSON parse per trial.
enum class ProvenanceRead { kRead, kSkip };

class SweepResults {
 public:
  explicit SweepResults(Store& store) : store_(store) {}

  // The sweep's trials with trial_index > after_index, by index, at most `limit` (< 0: all).
  // NOT_FOUND for an unknown sweep.
  StatusOr<std::vector<TrialResult>> Trials(int64_t sweep_id, int64_t after_index = -1, int64_t limit = -1,
                                            ProvenanceRead provenance = ProvenanceRead::kRead) const;

  // Every trial's curve of metric `name` (trials without a point are absent). NOT_FOUND for an
  // unknown sweep.
  StatusOr<std::map<int64_t, std::vector<StepValue>>> Curves(int64_t sweep_id, const std::string& name) const;

  // The names the sweep's trials reported: summaries and metric series, sorted, without repeats.
  StatusOr<std::vector<std::string>> MetricNames(int64_t sweep_id) const;

 private:
  Store& store_;
};

}  // namespace rung
