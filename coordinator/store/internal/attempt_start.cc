#include "coordinator/store/internal/attempt_start.h"

#include <filesystem>

#include "coordinator/store/internal/records.h"

namespace rung::store_internal {

std::string CheckpointDir(const std::string& artifact_root, const std::string& sweep_name, int64_t trial_index,
                          int64_t attempt) {
  return (std::filesystem::path(artifact_root) / sweep_name / std::to_string(trial_index) /
          ("attempt-" + std::to_string(attempt)))
      .string();
}

Status TouchWorker(Database& db, const std::string& worker_id, Timestamp now) {
  StatusOr<Statement> touch = db.Prepare("UPDATE workers SET last_seen_at = ? WHERE id = ?");
  if (!touch.ok()) return touch.status();
  touch->BindAll(ToUnixMicros(now), worker_id);
  return touch->Run();
}

StatusOr<Lease> StartAttempt(Database& db, TrialRecord& trial, const std::string& worker_id,
                             const StoreOptions& options, Timestamp now) {
  StatusOr<SweepRecord> sweep = LoadSweep(db, trial.sweep_id);
  if (!sweep.ok()) return sweep.status();
  Lease lease;
  lease.trial_id = trial.id;
  lease.sweep_id = sweep->id;
  lease.sweep_name = sweep->name;
  lease.trial_index = trial.trial_index;
  lease.attempt = trial.attempt + 1;
  StatusOr<Statement> config = db.Prepare("SELECT config_json FROM trials WHERE id = ?");
  if (!config.ok()) return config.status();
  config->Bind(1, trial.id);
  StatusOr<bool> found = config->Step();
  if (!found.ok()) return found.status();
  if (!*found) return Status::NotFound("trial " + std::to_string(trial.id) + " does not exist");
  lease.config_json = config->ColumnText(0);  // as stored: passed on without parsing
  lease.checkpoint_dir = CheckpointDir(options.artifact_root, sweep->name, trial.trial_index, lease.attempt);
  lease.lease_expires_at = now + options.lease_duration;
  lease.cpus = trial.cell.cpus;
  lease.gpus = trial.cell.gpus;
  lease.total_steps = trial.cell.steps;
  lease.world_size = trial.cell.world_size;
  StatusOr<std::vector<AttemptRecord>> previous =
      Select<AttemptRecord>(db, "WHERE trial_id = ? ORDER BY attempt DESC", trial.id);
  if (!previous.ok()) return previous.status();
  for (const AttemptRecord& earlier : *previous) {
    lease.resume_from.push_back({earlier.attempt, earlier.state, earlier.checkpoint_dir});
  }

  StatusOr<Statement> next_attempt = db.Prepare("UPDATE trials SET attempt = ? WHERE id = ?");
  if (!next_attempt.ok()) return next_attempt.status();
  next_attempt->BindAll(lease.attempt, trial.id);
  RUNG_RETURN_IF_ERROR(next_attempt->Run());
  trial.attempt = lease.attempt;
  StatusOr<Statement> insert = db.Prepare(
      "INSERT INTO attempts(trial_id, attempt, worker_id, state, leased_at, lease_expires_at, checkpoint_dir) "
      "VALUES (?, ?, ?, 'LEASED', ?, ?, ?)");
  if (!insert.ok()) return insert.status();
  insert->BindAll(trial.id, lease.attempt, worker_id, ToUnixMicros(now), ToUnixMicros(lease.lease_expires_at),
                  lease.checkpoint_dir);
  RUNG_RETURN_IF_ERROR(insert->Run());
  return lease;
}

}  // namespace rung::store_internal
