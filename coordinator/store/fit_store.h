// coordinator/store/fit_store.h
//
// The compute-multiplier fits the coordinator computed for a sweep (UserService.Fit), each stored
// with everything needed to tell what it was computed from: the ladder points (one per finished
// trial: its variant, rung label, compute and loss), the baseline, the keys that named the
// variants, the estimator options, and the result (the report as JSON and as the tables `rung fit`
// prints). Table sweep_fits (SCHEMA.md). A stored fit is never changed; a new fit is a new row.
//
// Example:
//   FitStore fits(store);
//   FitRecord fit;  // sweep_id, actor, metric, baseline, variant_keys, options, points, result
//   StatusOr<FitRecord> saved = fits.Save(fit);  // id and created_at filled in
//   StatusOr<std::vector<FitRecord>> all = fits.List(sweep_id);  // newest first
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/store/store.h"

namespace rung {

// One ladder point a fit used: a finished trial and the value that stood for it.
struct FitPointRecord {
  int64_t trial_id = 0;
  std::string variant;
  std::string label;   // rung label
  double compute = 0;  // 6 N D, FLOPs
  double loss = 0;     // the metric's value
  int64_t seed = 0;
};

struct FitRecord {
  int64_t id = 0;        // set by Save
  int64_t sweep_id = 0;
  Timestamp created_at;  // set by Save (the store's clock)
  std::string actor;     // "user:<name>"
  std::string metric;
  std::string baseline;  // the baseline variant
  std::vector<std::string> variant_keys;
  nlohmann::json options = nlohmann::json::object();  // estimator options
  std::vector<FitPointRecord> points;
  nlohmann::json result;    // the report (sweeps/fit/report_format.h ReportToJson)
  std::string result_text;  // the report's tables (FormatReportTable)
};

class FitStore {
 public:
  explicit FitStore(Store& store) : store_(store) {}

  // Stores a new fit and returns it with its id and time. NOT_FOUND for an unknown sweep.
  StatusOr<FitRecord> Save(FitRecord fit);

  // The sweep's fits, newest first; without result and result_text unless `with_result`.
  // NOT_FOUND for an unknown sweep.
  StatusOr<std::vector<FitRecord>> List(int64_t sweep_id, bool with_result = false) const;

  // One fit, with its result. NOT_FOUND for an unknown fit.
  StatusOr<FitRecord> Get(int64_t fit_id) const;

 private:
  Store& store_;
};

}  // namespace rung
