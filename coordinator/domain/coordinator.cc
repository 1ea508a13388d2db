// coordinator/domain/coordinator.cc
#include "coordinator/domain/coordinator.h"

#include <algorithm>
#include <filesystem>

namespace rung {

std::string ArtifactRootOf(const CoordinatorOptions& options) {
  if (!options.artifact_root.empty()) return options.artifact_root;
  const std::filesystem::path database = std::filesystem::absolute(options.database_path);
  return (database.parent_path() / "artifacts").string();
}

StatusOr<std::unique_ptr<Coordinator>> Coordinator::Open(const CoordinatorOptions& options, const Clock& clock) {
  if (options.database_path.empty()) {
    return Status::InvalidArgument("--db is required: the SQLite file that holds sweeps, trials and metrics");
  }
  if (options.lease_duration.count() <= 0) return Status::InvalidArgument("the lease duration must be positive");
  StoreOptions store_options;
  store_options.artifact_root = ArtifactRootOf(options);
  store_options.lease_duration = options.lease_duration;
  store_options.restart_grace = options.restart_grace;
  store_options.start_check = options.start_check;
  store_options.gang_formation_timeout = options.lease_duration;
  store_options.rendezvous_first_port = options.rendezvous_first_port;
  store_options.rendezvous_port_count = options.rendezvous_port_count;
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(options.database_path, clock, store_options));
  std::unique_ptr<Coordinator> coordinator(new Coordinator(std::move(store), clock));
  RUNG_RETURN_IF_ERROR(coordinator->trials_.RestartReconcile());
  RUNG_RETURN_IF_ERROR(coordinator->tuner_.ConsiderEarlyStopAll());
  RUNG_RETURN_IF_ERROR(coordinator->tuner_.DecideAll());
  RUNG_RETURN_IF_ERROR(coordinator->precision_.DecideAll());
  coordinator->reaper_.Start();
  return coordinator;
}

Coordinator::Coordinator(std::unique_ptr<Store> store, const Clock& clock)
    : clock_(clock),
      store_(std::move(store)),
      sweeps_(*store_, &signals_),
      tuner_(*store_, &signals_),
      precision_(*store_, *this, &signals_),
      trials_(*store_, &signals_),
      metrics_(*store_),
      workers_(*store_, &signals_),
      overviews_(*store_),
      events_(*store_),
      results_(*store_),
      fits_(*store_),
      gangs_(*store_),
      // Decisions an error left pending are retried here (SweepTuner::Decide's are idempotent).
      reaper_(trials_, clock_,
              [this] {
                tuner_.DecideAll().IgnoreError();
                precision_.DecideAll().IgnoreError();
              }),
      leases_(*store_, trials_, gangs_, reaper_, signals_) {}

Coordinator::~Coordinator() { Shutdown(); }

void Coordinator::Shutdown() {
  signals_.Close();
  metric_feed_.Close();
  reaper_.Stop();
}

StatusOr<EndingAck> Coordinator::EndAttempt(int64_t trial_id, int64_t attempt, const AttemptEnding& ending) {
  RUNG_ASSIGN_OR_RETURN(EndingAck ack, trials_.EndAttempt(trial_id, attempt, ending));
  if (!ack.duplicate) {
    // The header alone (no config parsed): this runs on every ending of every sweep.
    StatusOr<TrialRecord> trial = store_->Read([&](Tables& tables) { return tables.trials().Header(trial_id); });
    if (trial.ok()) {
      tuner_.Decide(trial->sweep_id).status().IgnoreError();  // retried later (above)
      precision_.Decide(trial->sweep_id).status().IgnoreError();
    }
  }
  return ack;
}

StatusOr<BatchAck> Coordinator::ReportBatch(const MetricBatch& batch) {
  RUNG_ASSIGN_OR_RETURN(BatchAck ack, trials_.ReportBatch(batch));
  if (!ack.duplicate) PublishPoints(batch);
  const bool evaluated = std::any_of(batch.points.begin(), batch.points.end(),
                                     [](const MetricPoint& point) { return point.evaluation; });
  if (!ack.duplicate && evaluated) tuner_.ConsiderEarlyStop(batch.trial_id).status().IgnoreError();  // retried later
  return ack;
}

void Coordinator::PublishPoints(const MetricBatch& batch, std::optional<int64_t> sweep_id) {
  if (batch.points.empty() || !metric_feed_.HasSubscribers()) return;
  if (!sweep_id) {
    StatusOr<TrialRecord> trial = store_->Read([&](Tables& tables) { return tables.trials().Header(batch.trial_id); });
    if (!trial.ok()) return;  // committed all the same: followers that miss it read it from the store
    sweep_id = trial->sweep_id;
  }
  metric_feed_.Publish(*sweep_id, batch.trial_id, batch.attempt, batch.points);
}

}  // namespace rung
