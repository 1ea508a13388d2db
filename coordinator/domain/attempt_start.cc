// coordinator/domain/attempt_start.cc
#include "coordinator/domain/attempt_start.h"

#include <filesystem>

namespace rung::domain {

std::string CheckpointDir(const std::string& artifact_root, const std::string& sweep_name, int64_t trial_index,
                          int64_t attempt) {
  return (std::filesystem::path(artifact_root) / sweep_name / std::to_string(trial_index) /
          ("attempt-" + std::to_string(attempt)))
      .string();
}

std::vector<PreviousAttempt> ResumePoints(const std::vector<AttemptRecord>& earlier) {
  std::vector<PreviousAttempt> points;
  for (const AttemptRecord& attempt : earlier) points.push_back({attempt.attempt, attempt.state, attempt.checkpoint_dir});
  return points;
}

StatusOr<Lease> StartAttempt(Tables& tables, TrialRecord& trial, const std::string& worker_id) {
  const StoreOptions& options = tables.options();
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(trial.sweep_id));
  Lease lease;
  lease.trial_id = trial.id;
  lease.sweep_id = sweep.id;
  lease.sweep_name = sweep.name;
  lease.trial_index = trial.trial_index;
  lease.attempt = trial.attempt + 1;
  RUNG_ASSIGN_OR_RETURN(lease.config_json, tables.trials().ConfigText(trial.id));  // parsed once, for the wire's ConfigObject
  lease.checkpoint_dir = CheckpointDir(options.artifact_root, sweep.name, trial.trial_index, lease.attempt);
  lease.lease_expires_at = tables.now() + options.lease_duration;
  lease.cpus = trial.cell.cpus;
  lease.gpus = trial.cell.gpus;
  lease.total_steps = trial.cell.steps;
  lease.world_size = trial.cell.world_size;
  RUNG_ASSIGN_OR_RETURN(std::vector<AttemptRecord> previous, tables.attempts().OfTrialNewestFirst(trial.id));
  lease.resume_from = ResumePoints(previous);

  RUNG_RETURN_IF_ERROR(tables.trials().SetAttempt(trial.id, lease.attempt));
  trial.attempt = lease.attempt;
  RUNG_RETURN_IF_ERROR(tables.attempts().Insert(trial.id, lease.attempt, worker_id, tables.now(),
                                                lease.lease_expires_at, lease.checkpoint_dir));
  return lease;
}

}  // namespace rung::domain
