// coordinator/domain/coordinator.h
//
// The coordinator's state behind its gRPC services, Ray GCS style: the SQLite store, the domain
// managers over it (sweeps, trial lifecycle, gangs, workers), the store's read models (metrics,
// overviews, events, results, fits), the change signals that wake long-polls and streams, the lease
// broker and the lease reaper thread. The services (coordinator/server/user_service.h,
// worker_service.h) validate requests, call these and convert; nothing here knows gRPC.
//
// Open() opens (or creates) the database, gives every live lease a fresh period
// (TrialLifecycle::RestartReconcile: workers that kept training while the coordinator was down are
// not declared stale before they could reach it), takes the decisions of searches and early stops a
// previous run left pending (SweepTuner: DecideAll, ConsiderEarlyStopAll) and starts the reaper. Every manager signals what
// it committed (change_signals.h); the services never have to.
//
// Example:
//   SystemClock clock;
//   StatusOr<std::unique_ptr<Coordinator>> coordinator = Coordinator::Open({"rung.db", "", 60s}, clock);
//   if (!coordinator.ok()) return coordinator.status();
//   RUNG_RETURN_IF_ERROR((*coordinator)->sweeps().Pause(sweep_id, "user:ada"));  // wakes streams itself
//
// Thread safety: thread-safe; the managers are, and the notifiers are.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "coordinator/domain/change_notifier.h"
#include "coordinator/domain/lease_broker.h"
#include "coordinator/domain/lease_reaper.h"
#include "coordinator/domain/metric_feed.h"
#include "coordinator/store/clock.h"
#include "coordinator/store/event_log.h"
#include "coordinator/store/fit_store.h"
#include "coordinator/domain/gang_leases.h"
#include "coordinator/store/metric_store.h"
#include "coordinator/store/overviews.h"
#include "coordinator/store/store.h"
#include "coordinator/domain/sweep_manager.h"
#include "coordinator/domain/sweep_precision.h"
#include "coordinator/domain/sweep_tuner.h"
#include "coordinator/store/sweep_results.h"
#include "coordinator/domain/trial_lifecycle.h"
#include "coordinator/domain/worker_registry.h"
#include "core/common/status.h"

namespace rung {

struct CoordinatorOptions {
  std::string database_path;  // required
  std::string artifact_root;  // "" = <database folder>/artifacts
  std::chrono::microseconds lease_duration = std::chrono::seconds(60);
  std::chrono::microseconds restart_grace = std::chrono::seconds(10);  // StoreOptions
  StoreOptions::StartCheck start_check = StoreOptions::StartCheck::kQuick;
  int rendezvous_first_port = 29500;  // gangs' rendezvous ports (StoreOptions)
  int rendezvous_port_count = 500;
};

// The artifact root a coordinator uses: `options.artifact_root`, or <database folder>/artifacts.
std::string ArtifactRootOf(const CoordinatorOptions& options);

class Coordinator {
 public:
  // Errors: INVALID_ARGUMENT without a database path; the store's (UNAVAILABLE, FAILED_PRECONDITION
  // for a database newer than this build, DATA_LOSS).
  // REQUIRES: `clock` outlives the coordinator.
  static StatusOr<std::unique_ptr<Coordinator>> Open(const CoordinatorOptions& options, const Clock& clock);

  // Stops the reaper (Shutdown()) and closes the database.
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Wakes every long-poll and stream for good (they answer UNAVAILABLE) and stops the reaper.
  void Shutdown();

  // An attempt's ending (TrialLifecycle::EndAttempt; its batches came before, by ReportBatch).
  // After an ending that changed something, the trial's sweep takes the decisions its search has
  // pending (SweepTuner::Decide, then SweepPrecision::Decide; an error there is the decision's, not
  // the ending's: it is retried at the next ending, by the reaper and at the next start).
  StatusOr<EndingAck> EndAttempt(int64_t trial_id, int64_t attempt, const AttemptEnding& ending);
  // TrialLifecycle::ReportBatch, then, for a new batch with evaluations, the early stops they
  // trigger (SweepTuner::ConsiderEarlyStop; its errors leave the batch acknowledged, and are retried
  // with the next batch and at the next start). A new batch's points go to the metric feed.
  StatusOr<BatchAck> ReportBatch(const MetricBatch& batch);

  const Clock& clock() const { return clock_; }
  const StoreOptions& store_options() const { return store_->options(); }
  const std::string& database_path() const { return store_->database_path(); }
  SweepManager& sweeps() { return sweeps_; }
  SweepTuner& tuner() { return tuner_; }
  SweepPrecision& precision() { return precision_; }
  TrialLifecycle& trials() { return trials_; }
  MetricStore& metrics() { return metrics_; }
  WorkerRegistry& workers() { return workers_; }
  Overviews& overviews() { return overviews_; }
  EventLog& events() { return events_; }
  SweepResults& results() { return results_; }
  FitStore& fits() { return fits_; }
  LeaseBroker& leases() { return leases_; }
  LeaseReaper& reaper() { return reaper_; }
  ChangeSignals& signals() { return signals_; }
  // Metric points as they are committed, for the sweeps' followers (metric_feed.h).
  MetricFeed& metric_feed() { return metric_feed_; }
  // Lease calls waiting for work now (monitoring, tests).
  int lease_waiters() { return signals_.work().waiters(); }

 private:
  Coordinator(std::unique_ptr<Store> store, const Clock& clock);

  // Hands a committed batch's points to the feed when anyone follows (reads the trial's sweep).
  void PublishPoints(const MetricBatch& batch, std::optional<int64_t> sweep_id = std::nullopt);

  const Clock& clock_;
  std::unique_ptr<Store> store_;
  ChangeSignals signals_;
  MetricFeed metric_feed_;
  SweepManager sweeps_;
  SweepTuner tuner_;
  SweepPrecision precision_;
  TrialLifecycle trials_;
  MetricStore metrics_;
  WorkerRegistry workers_;
  Overviews overviews_;
  EventLog events_;
  SweepResults results_;
  FitStore fits_;
  GangLeases gangs_;
  LeaseReaper reaper_;
  LeaseBroker leases_;
};

}  // namespace rung
