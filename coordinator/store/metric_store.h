// coordinator/store/metric_store.h
//
// What trials measure: metric points as they train (the metrics table), the results a successful
// attempt reports (summaries, learned positional parameters, diagnostics; written by
// TrialLifecycle's ReportBatch and EndAttempt, read here), and the lines workers relayed (logs).
//
// A trial's curve may come from several attempts: attempt 2 resumes from attempt 1's last
// checkpoint and reports again the steps attempt 1 reported after it. Every attempt's points are
// kept; Curve() takes each step from the newest attempt that reported it.
//
// Example:
//   MetricStore metrics(store);
//   StatusOr<std::vector<CurvePoint>> curve = metrics.Curve(trial_id, "val_loss");
//
// Thread safety: thread-safe (see store.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung {

// Which stored log lines of a trial to read (MetricStore::Logs).
struct LogFilter {
  int64_t attempt = 0;        // 0: every attempt
  int64_t after_attempt = 0;  // only lines of batches after (after_attempt, after_batch): following
  int64_t after_batch = 0;
};

// One metric of one trial by step, each step from the newest attempt that reported it
// (MetricStore::ForEachSweepCurve); the points' names are left empty: `name` is theirs.
struct TrialCurve {
  int64_t trial_id = 0;
  std::string name;
  std::vector<CurvePoint> points;
};

class MetricStore {
 public:
  explicit MetricStore(Store& store) : store_(store) {}

  // The trial's curve of metric `name` by step, each step from the newest attempt that reported it.
  StatusOr<std::vector<CurvePoint>> Curve(int64_t trial_id, const std::string& name) const;
  // Every curve of a sweep for the metrics `names`, of all its trials or of `trial_ids` among them,
  // by trial id then name, each handed to `visit` as soon as it is read (so the sweep's curves are
  // never all in memory at once): one query for the whole sweep, served by the metrics table's
  // primary key. A trial without a point of a name has no curve of it. `visit` runs inside the
  // read, under the store's lock: it must not call the store; its error ends the read and is
  // returned. Errors: NOT_FOUND (no such sweep), INVALID_ARGUMENT (a trial id that is not a trial
  // of the sweep, naming it), the store's.
  Status ForEachSweepCurve(int64_t sweep_id, const std::vector<std::string>& names,
                           const std::vector<int64_t>& trial_ids,
                           const std::function<Status(TrialCurve&&)>& visit) const;
  // The metric names the trial reported, sorted.
  StatusOr<std::vector<std::string>> MetricNames(int64_t trial_id) const;

  // The trial's summaries (from its successful attempt), by name.
  StatusOr<std::vector<SummaryValue>> Summaries(int64_t trial_id) const;
  // The learned positional parameters of the newest attempt that reported any, by step, name, layer,
  // head, index.
  StatusOr<std::vector<LearnedParamValue>> LearnedParams(int64_t trial_id) const;
  // The trial's diagnostics by name, each from the newest attempt that reported it.
  StatusOr<std::vector<Diagnostic>> Diagnostics(int64_t trial_id) const;

  // The lines the trial's workers relayed (TrialLifecycle::ReportBatch), by attempt, batch and line.
  // NOT_FOUND for an unknown trial.
  StatusOr<std::vector<StoredLogLine>> Logs(int64_t trial_id, const LogFilter& filter = {}) const;

 private:
  Store& store_;
};

}  // namespace rung
