// coordinator/server/sweep_submitter.h
//
// UserService.SubmitSweep: expands a spec text (sweeps/spec/expansion.h) and submits it to the
// store (SweepManager::Submit), or, for a dry run, asks the store what a submission would do
// (SweepManager::Preview) and stores nothing. Either way the answer warns when the disks of the
// database and the checkpoints have less free space than the cells that will run need
// (storage_space.h). The answer lists every cell of the expansion with
// its outcome (added, skipped because SUCCEEDED, requeued, unchanged, duplicate) and the trials the
// spec no longer has (removed); an added cell with the rung and axis values of a removed one says
// what changed between the two resolved configs ("train.lr: 0.003 -> 0.001"). A dry run also
// carries every cell as a Trial.
//
// Cells that name a source trial (train.init.from_trial) get its checkpoint folder
// (source_trials.h).
//
// A spec that expands to more than `max_trials` trials is INVALID_ARGUMENT with its count, the limit
// and the flag that raises it (rung-coordinator --max-trials-per-submission), before it is expanded.
// A spec with errors is INVALID_ARGUMENT with every error, one per line, each with file:line:col;
// `diagnostics` receives them structured (the service sends them as trailing metadata). Nothing is
// stored then.
//
// Example:
//   SweepSubmitter submitter(coordinator.sweeps(), coordinator.trials(), coordinator.tuner(),
//                            options.max_trials_per_submission, coordinator.database_path(),
//                            coordinator.store_options().artifact_root);
//   v1::SpecDiagnostics diagnostics;
//   StatusOr<v1::SubmitSweepResponse> response = submitter.Submit(request, "user:ada", &diagnostics);
//
// Thread safety: thread-safe (the store serializes submissions).
#pragma once

#include <cstdint>
#include <string>

#include "coordinator/domain/sweep_manager.h"
#include "coordinator/domain/sweep_tuner.h"
#include "coordinator/domain/trial_lifecycle.h"
#include "core/common/status.h"
#include "proto/rung.pb.h"
#include "sweeps/spec/expansion_limits.h"

namespace rung::server {

// The file name diagnostics name when a request gives none.
inline constexpr char kDefaultSpecFileName[] = "spec.yaml";

class SweepSubmitter {
 public:
  // REQUIRES: `sweeps` and `trials` outlive the submitter (trials: to resolve source trials);
  // max_trials >= 1.
  // `tuner` plans the trials of a spec with a tune block (sweep_tuner.h).
  // `database_path` and `artifact_root` are measured against the submission's estimated needs
  // (storage_space.h): a shortfall is a warning of the answer, not an error.
  SweepSubmitter(SweepManager& sweeps, const TrialLifecycle& trials, const SweepTuner& tuner, int64_t max_trials,
                 std::string database_path, std::string artifact_root)
      : sweeps_(sweeps),
        trials_(trials),
        tuner_(tuner),
        limits_{max_trials, "rung-coordinator --max-trials-per-submission N"},
        database_path_(std::move(database_path)),
        artifact_root_(std::move(artifact_root)) {}

  StatusOr<v1::SubmitSweepResponse> Submit(const v1::SubmitSweepRequest& request, const std::string& actor,
                                           v1::SpecDiagnostics* diagnostics);

 private:
  SweepManager& sweeps_;
  const TrialLifecycle& trials_;
  const SweepTuner& tuner_;
  const ExpansionLimits limits_;
  const std::string database_path_;
  const std::string artifact_root_;
};

}  // namespace rung::server
