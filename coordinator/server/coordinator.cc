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
      reaper_(trials_, clock_, [this] { WorkQueued(); }),
      gangs_(*store_),
      leases_(trials_, gangs_, reaper_, work_) {}

Coordinator::~Coordinator() { Shutdown(); }

void Coordinator::Shutdown() {
  work_.Close();
  changes_.Close();
  reaper_.Stop();
}

void Coordinator::WorkQueued() {
  work_.Notify();
  changes_.Notify();
}

void Coordinator::Changed() { changes_.Notify(); }

}  // namespace rung::server
