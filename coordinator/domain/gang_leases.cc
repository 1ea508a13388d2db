// coordinator/domain/gang_leases.cc
#include "coordinator/domain/gang_leases.h"

#include <algorithm>

#include "coordinator/domain/allocation_fit.h"
#include "coordinator/domain/attempt_start.h"
#include "coordinator/domain/transitions.h"
#include "coordinator/store/event_log.h"

namespace rung {
namespace {

using domain::WorkerActor;

std::string Seconds(std::chrono::microseconds duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) + " s";
}

Status ReleaseGang(Tables& tables, int64_t trial_id, const std::string& why) {
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(trial_id));
  RUNG_ASSIGN_OR_RETURN(std::vector<GangReservation> reservations, tables.gangs().Reservations(trial_id));
  std::string workers;
  for (const GangReservation& reservation : reservations) {
    workers += (workers.empty() ? "" : ", ") + reservation.worker_id;
  }
  RUNG_RETURN_IF_ERROR(tables.gangs().DropReservations(trial_id));
  return domain::NoteTrial(tables, trial, event_kind::kGangReleased,
                           {domain::kCoordinatorActor, "gang released (" + why + "); workers " + workers +
                                                           " are free again"});
}

// Releases the gangs that cannot or did not form in time (gang_leases.h, step 3).
Status ReleaseStale(Tables& tables, std::chrono::microseconds timeout) {
  RUNG_ASSIGN_OR_RETURN(std::vector<int64_t> unleasable, tables.gangs().ReservedButUnleasable());
  for (int64_t trial_id : unleasable) {
    RUNG_RETURN_IF_ERROR(ReleaseGang(tables, trial_id, "the trial is no longer leasable"));
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<LateGang> late, tables.gangs().LateGangs(tables.now() - timeout));
  for (const LateGang& gang : late) {
    RUNG_RETURN_IF_ERROR(ReleaseGang(tables, gang.trial_id,
                                     gang.formation_timed_out
                                         ? "not every rank was reserved within " + Seconds(timeout)
                                         : "a reserving worker stopped polling for " + Seconds(timeout)));
  }
  return Status::Ok();
}

// The worker's rank of a leased gang not yet handed to it, as its lease (marked handed out).
StatusOr<std::optional<Lease>> Deliver(Tables& tables, const std::string& worker_id) {
  RUNG_ASSIGN_OR_RETURN(std::optional<GangRankRow> rank, tables.gangs().UndeliveredRankOf(worker_id));
  if (!rank) return std::optional<Lease>();
  Lease lease;
  lease.rank = rank->rank;
  lease.rendezvous = rank->rendezvous;
  lease.lease_expires_at = rank->lease_expires_at;
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Get(rank->trial_id));
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(trial.sweep_id));
  RUNG_ASSIGN_OR_RETURN(std::vector<AttemptRecord> attempts,
                        tables.attempts().OfTrialNewestFirst(rank->trial_id, rank->attempt));
  lease.trial_id = rank->trial_id;
  lease.sweep_id = sweep.id;
  lease.sweep_name = sweep.name;
  lease.trial_index = trial.trial_index;
  lease.attempt = rank->attempt;
  lease.config_json = trial.cell.config.dump();
  lease.world_size = TrialWorldSize(trial);
  lease.total_steps = trial.cell.steps;
  lease.cpus = trial.cell.cpus / lease.world_size;
  lease.gpus = trial.cell.gpus / lease.world_size;
  std::vector<AttemptRecord> earlier;
  for (const AttemptRecord& record : attempts) {
    if (record.attempt == rank->attempt) {
      lease.checkpoint_dir = record.checkpoint_dir;
      if (lease.rank == 0) lease.lease_expires_at = record.lease_expires_at;
    } else {
      earlier.push_back(record);
    }
  }
  lease.resume_from = domain::ResumePoints(earlier);
  RUNG_RETURN_IF_ERROR(tables.gangs().MarkDelivered(rank->trial_id, rank->attempt, rank->rank, tables.now()));
  return std::optional<Lease>(std::move(lease));
}

// Leases the trial to its reserved workers, rank 0 first reserved (gang_leases.h, step 2).
Status FormGang(Tables& tables, TrialRecord& trial, const std::vector<GangReservation>& members) {
  const StoreOptions& options = tables.options();
  RUNG_ASSIGN_OR_RETURN(std::optional<WorkerRecord> rank0, tables.workers().Find(members.front().worker_id));
  if (!rank0) return Status::NotFound("worker " + members.front().worker_id + " is not registered");
  RUNG_ASSIGN_OR_RETURN(Lease lease, domain::StartAttempt(tables, trial, members.front().worker_id));
  const int64_t count = std::max(1, options.rendezvous_port_count);
  const int64_t port = options.rendezvous_first_port + (trial.id * 1000003 + lease.attempt) % count;
  const std::string rendezvous = rank0->info.host + ":" + std::to_string(port);
  std::string placement;
  for (size_t rank = 0; rank < members.size(); ++rank) {
    GangRankRow row;
    row.trial_id = trial.id;
    row.attempt = lease.attempt;
    row.rank = static_cast<int64_t>(rank);
    row.worker_id = members[rank].worker_id;
    row.rendezvous = rendezvous;
    row.lease_expires_at = lease.lease_expires_at;
    RUNG_RETURN_IF_ERROR(tables.gangs().InsertRank(row));
    placement += (rank == 0 ? "" : ", ") + std::string("rank ") + std::to_string(rank) + " on worker " +
                 members[rank].worker_id;
  }
  RUNG_RETURN_IF_ERROR(tables.gangs().DropReservations(trial.id));
  return domain::MoveTrial(tables, trial, TrialState::kLeased,
                           {WorkerActor(members.back().worker_id),
                            "leased as a gang of " + std::to_string(members.size()) + " ranks as attempt " +
                                std::to_string(lease.attempt) + ": " + placement + "; rendezvous " + rendezvous});
}

// Why `trial` can never be held by the registered workers, or "" when it can.
std::string WhyItCannotFit(const TrialRecord& trial, const std::vector<WorkerRecord>& workers) {
  const int64_t world = TrialWorldSize(trial);
  const int64_t rank_cpus = trial.cell.cpus / world;
  const int64_t rank_gpus = trial.cell.gpus / world;
  int64_t rank_holders = 0;
  for (const WorkerRecord& worker : workers) {
    if (worker.info.cpus >= trial.cell.cpus && worker.info.gpus >= trial.cell.gpus) return "";
    if (worker.info.cpus >= rank_cpus && worker.info.gpus >= rank_gpus) ++rank_holders;
  }
  if (world > 1 && rank_holders >= world) return "";
  std::string need = std::to_string(trial.cell.cpus) + " CPU slots" +
                     (trial.cell.gpus > 0 ? " and " + std::to_string(trial.cell.gpus) + " GPUs" : std::string());
  std::string reason = "waiting: no registered worker can run it: it needs " + need;
  if (world > 1) {
    reason += " (" + std::to_string(world) + " ranks of " + std::to_string(rank_cpus) + " slots" +
              (rank_gpus > 0 ? " and " + std::to_string(rank_gpus) + " GPUs" : std::string()) +
              "); no worker has that much, and only " + std::to_string(rank_holders) + " of the " +
              std::to_string(workers.size()) + " registered workers can hold one rank (a gang takes one rank per "
              "worker)";
  } else {
    reason += "; the largest registered worker has fewer";
  }
  return reason + ": register bigger or more workers, or lower resources";
}

// Records a trial_waiting event for every PENDING trial the registered workers can never hold,
// unless its newest state reason already says the same. Only trials no single worker holds are
// looked at (TrialTable::PendingBeyondEveryWorker): the rest of a large sweep costs nothing here.
Status ExplainWaiting(Tables& tables, const std::vector<WorkerRecord>& workers) {
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> pending, tables.trials().PendingBeyondEveryWorker());
  for (const TrialRecord& trial : pending) {
    const std::string reason = WhyItCannotFit(trial, workers);
    if (reason.empty()) continue;
    RUNG_ASSIGN_OR_RETURN(std::optional<std::string> latest, tables.events().LatestStateReason(trial.id));
    if (latest && *latest == reason) continue;
    RUNG_RETURN_IF_ERROR(
        domain::NoteTrial(tables, trial, event_kind::kTrialWaiting, {domain::kCoordinatorActor, reason}));
  }
  return Status::Ok();
}

}  // namespace

int64_t TrialWorldSize(const TrialRecord& trial) { return std::max<int64_t>(1, trial.cell.world_size); }

StatusOr<GangPoll> GangLeases::Poll(const std::string& worker_id) {
  return store_.Write([&](Tables& tables) { return PollIn(tables, worker_id); });
}

StatusOr<GangPoll> GangLeases::Join(const std::string& worker_id, int64_t free_cpus, int64_t free_gpus) {
  return store_.Write([&](Tables& tables) { return JoinIn(tables, worker_id, free_cpus, free_gpus); });
}

StatusOr<GangPoll> GangLeases::PollIn(Tables& tables, const std::string& worker_id) const {
  RUNG_RETURN_IF_ERROR(tables.workers().Touch(worker_id, tables.now()));  // a waiting worker is alive
  // No gang forming anywhere and no rank waiting for this worker (every look of a deployment that
  // runs no gangs): one probe instead of the release, delivery and keep-alive statements below.
  RUNG_ASSIGN_OR_RETURN(bool gangs_about, tables.gangs().AnythingFor(worker_id));
  if (!gangs_about) return GangPoll{};
  RUNG_RETURN_IF_ERROR(ReleaseStale(tables, tables.options().gang_formation_timeout));
  GangPoll poll;
  RUNG_ASSIGN_OR_RETURN(poll.lease, Deliver(tables, worker_id));
  if (poll.lease) return poll;
  RUNG_ASSIGN_OR_RETURN(poll.reserved, tables.gangs().KeepReservationsAlive(worker_id, tables.now()));
  return poll;
}

StatusOr<GangPoll> GangLeases::JoinIn(Tables& tables, const std::string& worker_id, int64_t free_cpus,
                                      int64_t free_gpus) const {
  RUNG_ASSIGN_OR_RETURN(std::vector<WorkerRecord> workers, tables.workers().List());
  auto joining = std::find_if(workers.begin(), workers.end(),
                              [&](const WorkerRecord& worker) { return worker.info.id == worker_id; });
  if (joining == workers.end()) {
    return Status::NotFound("worker " + worker_id + " is not registered: register it before leasing");
  }
  // A worker that knows when it stops reserves a rank only of a trial that reaches its own checkpoint
  // before then (allocation_fit.h), and estimates at most kCandidatesPerLook of them.
  std::optional<domain::AllocationFit> fit;
  if (joining->info.stops_at) fit.emplace(tables, *joining->info.stops_at);
  int64_t estimated = 0;
  RUNG_RETURN_IF_ERROR(ExplainWaiting(tables, workers));
  std::vector<WorkerRecord> live;
  for (const WorkerRecord& worker : workers) {
    if (worker.info.id == worker_id || tables.now() - worker.last_seen_at <= tables.options().lease_duration) {
      live.push_back(worker);
    }
  }

  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> candidates, tables.trials().PendingGangs());
  GangPoll poll;
  for (TrialRecord& trial : candidates) {
    const int64_t world = TrialWorldSize(trial);
    const int64_t rank_cpus = trial.cell.cpus / world;
    const int64_t rank_gpus = trial.cell.gpus / world;
    if (rank_cpus > free_cpus || rank_gpus > free_gpus) continue;
    int64_t rank_holders = 0;
    bool one_worker_holds_it = false;
    for (const WorkerRecord& worker : live) {
      if (worker.info.cpus >= trial.cell.cpus && worker.info.gpus >= trial.cell.gpus) one_worker_holds_it = true;
      if (worker.info.cpus >= rank_cpus && worker.info.gpus >= rank_gpus) ++rank_holders;
    }
    if (one_worker_holds_it || rank_holders < world) continue;  // a single lease, or it cannot form now
    if (fit) {
      if (++estimated > domain::kCandidatesPerLook) break;
      // Only to its own checkpoint: the stop of one member would preempt every rank of the gang.
      RUNG_ASSIGN_OR_RETURN(domain::Fit fits, fit->Fits(trial));
      if (fits != domain::Fit::kItsCheckpoint) continue;
    }

    RUNG_RETURN_IF_ERROR(tables.gangs().Reserve(trial.id, worker_id, tables.now()));
    RUNG_RETURN_IF_ERROR(tables.workers().Touch(worker_id, tables.now()));
    RUNG_ASSIGN_OR_RETURN(std::vector<GangReservation> members, tables.gangs().Reservations(trial.id));
    RUNG_RETURN_IF_ERROR(domain::NoteTrial(tables, trial, event_kind::kGangReserved,
                                           {WorkerActor(worker_id), "worker " + worker_id +
                                                                        " reserved a rank of the gang: " +
                                                                        std::to_string(members.size()) + " of " +
                                                                        std::to_string(world) + " ranks reserved"}));
    if (static_cast<int64_t>(members.size()) < world) {
      poll.reserved = true;
      return poll;
    }
    RUNG_RETURN_IF_ERROR(FormGang(tables, trial, members));
    poll.formed = true;
    RUNG_ASSIGN_OR_RETURN(poll.lease, Deliver(tables, worker_id));
    return poll;
  }
  return poll;
}

}  // namespace rung
