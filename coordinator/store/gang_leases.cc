#include "coordinator/store/gang_leases.h"

#include <algorithm>

#include "coordinator/store/event_log.h"
#include "coordinator/store/internal/attempt_start.h"
#include "coordinator/store/internal/records.h"
#include "coordinator/store/internal/transitions.h"

namespace rung {
namespace {

using store_internal::TouchWorker;

constexpr char kCoordinator[] = "coordinator";

std::string WorkerActor(const std::string& worker_id) { return "worker:" + worker_id; }

std::string Seconds(std::chrono::microseconds duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) + " s";
}

struct Reservation {
  std::string worker_id;
  Timestamp reserved_at;
  Timestamp polled_at;
};

StatusOr<std::vector<Reservation>> ReservationsOf(Database& db, int64_t trial_id) {
  StatusOr<Statement> query = db.Prepare(
      "SELECT worker_id, reserved_at, polled_at FROM gang_reservations WHERE trial_id = ? "
      "ORDER BY reserved_at, rowid");
  if (!query.ok()) return query.status();
  query->Bind(1, trial_id);
  std::vector<Reservation> reservations;
  for (;;) {
    StatusOr<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (!*row) return reservations;
    reservations.push_back({query->ColumnText(0), FromUnixMicros(query->ColumnInt64(1)),
                            FromUnixMicros(query->ColumnInt64(2))});
  }
}

StatusOr<std::vector<int64_t>> TrialIds(Database& db, const std::string& sql) {
  StatusOr<Statement> query = db.Prepare(sql);
  if (!query.ok()) return query.status();
  std::vector<int64_t> ids;
  for (;;) {
    StatusOr<bool> row = query->Step();
    if (!row.ok()) return row.status();
    if (!*row) return ids;
    ids.push_back(query->ColumnInt64(0));
  }
}

Status AppendTrialEvent(Database& db, const TrialRecord& trial, const char* kind, const std::string& actor,
                        const std::string& reason, Timestamp now) {
  EventRecord event;
  event.at = now;
  event.sweep_id = trial.sweep_id;
  event.trial_id = trial.id;
  event.attempt = trial.attempt;
  event.kind = kind;
  event.from_state = TrialStateName(trial.state);
  event.to_state = TrialStateName(trial.state);
  event.actor = actor;
  event.reason = reason;
  return store_internal::AppendEvent(db, event);
}

Status ReleaseGang(Database& db, int64_t trial_id, const std::string& why, Timestamp now) {
  StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, trial_id);
  if (!trial.ok()) return trial.status();
  StatusOr<std::vector<Reservation>> reservations = ReservationsOf(db, trial_id);
  if (!reservations.ok()) return reservations.status();
  std::string workers;
  for (const Reservation& reservation : *reservations) {
    workers += (workers.empty() ? "" : ", ") + reservation.worker_id;
  }
  StatusOr<Statement> drop = db.Prepare("DELETE FROM gang_reservations WHERE trial_id = ?");
  if (!drop.ok()) return drop.status();
  drop->Bind(1, trial_id);
  RUNG_RETURN_IF_ERROR(drop->Run());
  return AppendTrialEvent(db, *trial, event_kind::kGangReleased, kCoordinator,
                          "gang released (" + why + "); workers " + workers + " are free again", now);
}

// Releases the gangs that cannot or did not form in time (gang_leases.h, step 3).
Status ReleaseStale(Database& db, std::chrono::microseconds timeout, Timestamp now) {
  StatusOr<std::vector<int64_t>> unleasable = TrialIds(
      db,
      "SELECT DISTINCT g.trial_id FROM gang_reservations g JOIN trials t ON t.id = g.trial_id JOIN sweeps s ON "
      "s.id = t.sweep_id WHERE t.state != 'PENDING' OR s.state != 'ACTIVE'");
  if (!unleasable.ok()) return unleasable.status();
  for (int64_t trial_id : *unleasable) {
    RUNG_RETURN_IF_ERROR(ReleaseGang(db, trial_id, "the trial is no longer leasable", now));
  }
  StatusOr<Statement> late = db.Prepare(
      "SELECT trial_id, MIN(reserved_at), MIN(polled_at) FROM gang_reservations GROUP BY trial_id "
      "HAVING MIN(reserved_at) <= ?1 OR MIN(polled_at) <= ?1");
  if (!late.ok()) return late.status();
  late->Bind(1, ToUnixMicros(now - timeout));
  std::vector<std::pair<int64_t, bool>> stale;  // trial, formation timed out (else a worker went quiet)
  for (;;) {
    StatusOr<bool> row = late->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    stale.push_back({late->ColumnInt64(0), late->ColumnInt64(1) <= ToUnixMicros(now - timeout)});
  }
  for (const auto& [trial_id, timed_out] : stale) {
    RUNG_RETURN_IF_ERROR(ReleaseGang(db, trial_id,
                                     timed_out ? "not every rank was reserved within " + Seconds(timeout)
                                               : "a reserving worker stopped polling for " + Seconds(timeout),
                                     now));
  }
  return Status::Ok();
}

// The worker's rank of a leased gang not yet handed to it, as its lease (marked handed out).
StatusOr<std::optional<Lease>> Deliver(Database& db, const std::string& worker_id, Timestamp now) {
  StatusOr<Statement> query = db.Prepare(
      "SELECT r.trial_id, r.attempt, r.rank, r.rendezvous, r.lease_expires_at FROM attempt_ranks r JOIN attempts a "
      "ON a.trial_id = r.trial_id AND a.attempt = r.attempt WHERE r.worker_id = ? AND r.delivered_at IS NULL AND "
      "a.state IN ('LEASED', 'RUNNING') ORDER BY r.trial_id LIMIT 1");
  if (!query.ok()) return query.status();
  query->Bind(1, worker_id);
  StatusOr<bool> row = query->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Lease>();
  const int64_t trial_id = query->ColumnInt64(0);
  const int64_t attempt = query->ColumnInt64(1);
  Lease lease;
  lease.rank = query->ColumnInt64(2);
  lease.rendezvous = query->ColumnText(3);
  lease.lease_expires_at = FromUnixMicros(query->ColumnInt64(4));

  StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, trial_id);
  if (!trial.ok()) return trial.status();
  StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, trial->sweep_id);
  if (!sweep.ok()) return sweep.status();
  StatusOr<std::vector<AttemptRecord>> attempts =
      store_internal::Select<AttemptRecord>(db, "WHERE trial_id = ? AND attempt <= ? ORDER BY attempt DESC",
                                            trial_id, attempt);
  if (!attempts.ok()) return attempts.status();
  lease.trial_id = trial_id;
  lease.sweep_id = sweep->id;
  lease.sweep_name = sweep->name;
  lease.trial_index = trial->trial_index;
  lease.attempt = attempt;
  lease.config_json = trial->cell.config.dump();
  lease.world_size = TrialWorldSize(*trial);
  lease.total_steps = trial->cell.steps;
  lease.cpus = trial->cell.cpus / lease.world_size;
  lease.gpus = trial->cell.gpus / lease.world_size;
  for (const AttemptRecord& record : *attempts) {
    if (record.attempt == attempt) {
      lease.checkpoint_dir = record.checkpoint_dir;
      if (lease.rank == 0) lease.lease_expires_at = record.lease_expires_at;
    } else {
      lease.resume_from.push_back({record.attempt, record.state, record.checkpoint_dir});
    }
  }
  StatusOr<Statement> handed = db.Prepare(
      "UPDATE attempt_ranks SET delivered_at = ? WHERE trial_id = ? AND attempt = ? AND rank = ?");
  if (!handed.ok()) return handed.status();
  handed->BindAll(ToUnixMicros(now), trial_id, attempt, lease.rank);
  RUNG_RETURN_IF_ERROR(handed->Run());
  return std::optional<Lease>(std::move(lease));
}

// Leases the trial to its reserved workers, rank 0 first reserved (gang_leases.h, step 2).
Status FormGang(Database& db, TrialRecord& trial, const std::vector<Reservation>& members,
                const StoreOptions& options, Timestamp now) {
  StatusOr<WorkerRecord> rank0 = [&]() -> StatusOr<WorkerRecord> {
    StatusOr<std::optional<WorkerRecord>> worker =
        store_internal::SelectOne<WorkerRecord>(db, "WHERE id = ?", members.front().worker_id);
    if (!worker.ok()) return worker.status();
    if (!*worker) return Status::NotFound("worker " + members.front().worker_id + " is not registered");
    return **worker;
  }();
  if (!rank0.ok()) return rank0.status();
  StatusOr<Lease> lease = store_internal::StartAttempt(db, trial, members.front().worker_id, options, now);
  if (!lease.ok()) return lease.status();
  const int64_t count = std::max(1, options.rendezvous_port_count);
  const int64_t port = options.rendezvous_first_port + (trial.id * 1000003 + lease->attempt) % count;
  const std::string rendezvous = rank0->info.host + ":" + std::to_string(port);
  StatusOr<Statement> insert = db.Prepare(
      "INSERT INTO attempt_ranks(trial_id, attempt, rank, worker_id, rendezvous, lease_expires_at) "
      "VALUES (?, ?, ?, ?, ?, ?)");
  if (!insert.ok()) return insert.status();
  std::string placement;
  for (size_t rank = 0; rank < members.size(); ++rank) {
    insert->Reset();
    insert->BindAll(trial.id, lease->attempt, static_cast<int64_t>(rank), members[rank].worker_id, rendezvous,
                    ToUnixMicros(lease->lease_expires_at));
    RUNG_RETURN_IF_ERROR(insert->Run());
    placement += (rank == 0 ? "" : ", ") + std::string("rank ") + std::to_string(rank) + " on worker " +
                 members[rank].worker_id;
  }
  StatusOr<Statement> drop = db.Prepare("DELETE FROM gang_reservations WHERE trial_id = ?");
  if (!drop.ok()) return drop.status();
  drop->Bind(1, trial.id);
  RUNG_RETURN_IF_ERROR(drop->Run());
  return store_internal::MoveTrial(
      db, trial, TrialState::kLeased,
      {WorkerActor(members.back().worker_id), "leased as a gang of " + std::to_string(members.size()) +
                                                   " ranks as attempt " + std::to_string(lease->attempt) + ": " +
                                                   placement + "; rendezvous " + rendezvous},
      now);
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
// looked at (in SQL): the rest of a large sweep costs nothing here.
Status ExplainWaiting(Database& db, const std::vector<WorkerRecord>& workers, Timestamp now) {
  StatusOr<std::vector<TrialRecord>> pending = store_internal::Select<TrialRecord>(
      db,
      "JOIN sweeps ON sweeps.id = trials.sweep_id WHERE trials.state = 'PENDING' AND sweeps.state = 'ACTIVE' AND "
      "NOT EXISTS (SELECT 1 FROM workers w WHERE w.cpus >= trials.cpus AND w.gpus >= trials.gpus)");
  if (!pending.ok()) return pending.status();
  for (const TrialRecord& trial : *pending) {
    const std::string reason = WhyItCannotFit(trial, workers);
    if (reason.empty()) continue;
    StatusOr<Statement> latest = db.Prepare(
        "SELECT reason FROM events WHERE trial_id = ? AND kind IN ('trial_state', 'trial_waiting') "
        "ORDER BY id DESC LIMIT 1");
    if (!latest.ok()) return latest.status();
    latest->Bind(1, trial.id);
    StatusOr<bool> row = latest->Step();
    if (!row.ok()) return row.status();
    if (*row && latest->ColumnText(0) == reason) continue;
    RUNG_RETURN_IF_ERROR(AppendTrialEvent(db, trial, event_kind::kTrialWaiting, kCoordinator, reason, now));
  }
  return Status::Ok();
}

}  // namespace

int64_t TrialWorldSize(const TrialRecord& trial) { return std::max<int64_t>(1, trial.cell.world_size); }

StatusOr<GangPoll> GangLeases::Poll(const std::string& worker_id) {
  return store_.Write([&](Database& db, Timestamp now) { return PollIn(db, worker_id, now); });
}

StatusOr<GangPoll> GangLeases::Join(const std::string& worker_id, int64_t free_cpus, int64_t free_gpus) {
  return store_.Write([&](Database& db, Timestamp now) { return JoinIn(db, worker_id, free_cpus, free_gpus, now); });
}

StatusOr<GangPoll> GangLeases::PollIn(Database& db, const std::string& worker_id, Timestamp now) const {
  const StoreOptions& options = store_.options();
  RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));  // a waiting worker is alive
  // No gang forming anywhere and no rank waiting for this worker (every look of a deployment that
  // runs no gangs): one probe instead of the release, delivery and keep-alive statements below.
  StatusOr<int64_t> gang_state = db.QueryInt64(
      "SELECT EXISTS (SELECT 1 FROM gang_reservations) OR "
      "EXISTS (SELECT 1 FROM attempt_ranks WHERE worker_id = ? AND delivered_at IS NULL)",
      worker_id);
  if (!gang_state.ok()) return gang_state.status();
  if (*gang_state == 0) return GangPoll{};
  RUNG_RETURN_IF_ERROR(ReleaseStale(db, options.gang_formation_timeout, now));
  GangPoll poll;
  StatusOr<std::optional<Lease>> lease = Deliver(db, worker_id, now);
  if (!lease.ok()) return lease.status();
  if (*lease) {
    poll.lease = std::move(*lease);
    return poll;
  }
  StatusOr<Statement> keep = db.Prepare("UPDATE gang_reservations SET polled_at = ? WHERE worker_id = ?");
  if (!keep.ok()) return keep.status();
  keep->BindAll(ToUnixMicros(now), worker_id);
  RUNG_RETURN_IF_ERROR(keep->Run());
  poll.reserved = db.ChangedRows() > 0;
  return poll;
}

StatusOr<GangPoll> GangLeases::JoinIn(Database& db, const std::string& worker_id, int64_t free_cpus,
                                      int64_t free_gpus, Timestamp now) const {
  const StoreOptions& options = store_.options();
  StatusOr<std::vector<WorkerRecord>> workers = store_internal::Select<WorkerRecord>(db, "ORDER BY id");
  if (!workers.ok()) return workers.status();
  if (std::none_of(workers->begin(), workers->end(),
                   [&](const WorkerRecord& worker) { return worker.info.id == worker_id; })) {
    return Status::NotFound("worker " + worker_id + " is not registered: register it before leasing");
  }
  RUNG_RETURN_IF_ERROR(ExplainWaiting(db, *workers, now));
  std::vector<WorkerRecord> live;
  for (const WorkerRecord& worker : *workers) {
    if (worker.info.id == worker_id || now - worker.last_seen_at <= options.lease_duration) live.push_back(worker);
  }

  StatusOr<std::vector<TrialRecord>> candidates = store_internal::Select<TrialRecord>(
      db,
      "JOIN sweeps ON sweeps.id = trials.sweep_id WHERE trials.state = 'PENDING' AND sweeps.state = 'ACTIVE' AND "
      "trials.world_size > 1 ORDER BY trials.priority DESC, trials.id");
  if (!candidates.ok()) return candidates.status();
  GangPoll poll;
  for (TrialRecord& trial : *candidates) {
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

    StatusOr<Statement> reserve = db.Prepare(
        "INSERT INTO gang_reservations(trial_id, worker_id, reserved_at, polled_at) VALUES (?, ?, ?, ?)");
    if (!reserve.ok()) return reserve.status();
    reserve->BindAll(trial.id, worker_id, ToUnixMicros(now), ToUnixMicros(now));
    RUNG_RETURN_IF_ERROR(reserve->Run());
    RUNG_RETURN_IF_ERROR(TouchWorker(db, worker_id, now));
    StatusOr<std::vector<Reservation>> members = ReservationsOf(db, trial.id);
    if (!members.ok()) return members.status();
    RUNG_RETURN_IF_ERROR(AppendTrialEvent(
        db, trial, event_kind::kGangReserved, WorkerActor(worker_id),
        "worker " + worker_id + " reserved a rank of the gang: " + std::to_string(members->size()) + " of " +
            std::to_string(world) + " ranks reserved",
        now));
    if (static_cast<int64_t>(members->size()) < world) {
      poll.reserved = true;
      return poll;
    }
    RUNG_RETURN_IF_ERROR(FormGang(db, trial, *members, options, now));
    poll.formed = true;
    StatusOr<std::optional<Lease>> lease = Deliver(db, worker_id, now);
    if (!lease.ok()) return lease.status();
    poll.lease = std::move(*lease);
    return poll;
  }
  return poll;
}

}  // namespace rung
