// coordinator/server/coordinator.cc
#include "coordinator/server/coordinator.h"

#include <filesystem>

namespace rung::server {

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
  store_options.gang_formation_timeout = options.lease_duration;
  store_options.rendezvous_first_port = options.rendezvous_first_port;
  store_options.rendezvous_port_count = options.rendezvous_port_count;
  StatusOr<std::unique_ptr<Store>> store = Store::Open(options.database_path, clock, store_options);
  if (!store.ok()) return store.status();
  std::unique_ptr<Coordinator> coordinator(new Coordinator(std::move(store).value(), clock));
  RUNG_RETURN_IF_ERROR(coordinator->trials_.RestartReconcile().status());
  coordinator->reaper_.Start();
  return coordinator;
}

Coordinator::Coordinator(std::unique_ptr<Store> store, const Clock& clock)
    : clock_(clock),
      store_(std::move(store)),
      sweeps_(*store_),
      trials_(*store_),
      metrics_(*store_),
      workers_(*store_),
      overviews_(*store_),
      events_(*store_),
      results_(*store_),
      fits_(*store_),
      gangs_(*store_),
      reaper_(trials_, clock_, [this] { WorkQueued(); }),
      leases_(*store_, trials_, gangs_, reaper_, work_) {}

Coordinator::~Coordinator() { Shutdown(); }

void Coordinator::Shutdown() {
  work_.Close();
  changes_.Close();
  reaper_.Stop();
}

StatusOr<Coordinator::EndedAttempt> Coordinator::EndAttemptAndLease(int64_t trial_id, int64_t attempt,
                                                                    const AttemptEnding& ending,
                                                                    const MetricBatch* final_batch,
                                                                    const std::optional<LeaseAsk>& next) {
  bool gang_formed = false;
  StatusOr<EndedAttempt> ended = store_->Write([&](Database& db, Timestamp now) -> StatusOr<EndedAttempt> {
    StatusOr<EndingAck> ack = trials_.EndAttemptIn(db, trial_id, attempt, ending, final_batch, now);
    if (!ack.ok()) return ack.status();
    EndedAttempt result{*ack, std::nullopt};
    if (!next || next->free_cpus <= 0) return result;
    if (!db.Execute("SAVEPOINT lease_next").ok()) return result;
    StatusOr<std::optional<rung::Lease>> lease = leases_.LookIn(db, *next, now, &gang_formed);
    if (lease.ok()) {
      result.next_lease = std::move(*lease);
    } else {
      gang_formed = false;
      db.Execute("ROLLBACK TO lease_next");  // the ending stays
    }
    db.Execute("RELEASE lease_next");
    return result;
  });
  if (!ended.ok()) return ended;
  if (!ended->ack.duplicate) ended->ack.trial_state == TrialState::kPending ? WorkQueued() : Changed();
  if (ended->next_lease || gang_formed) {
    leases_.Leased(ended->next_lease, gang_formed);
    Changed();
  }
  return ended;
}

void Coordinator::WorkQueued() {
  work_.Notify();
  changes_.Notify();
}

void Coordinator::Changed() { changes_.Notify(); }

}  // namespace rung::server
