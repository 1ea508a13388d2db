// coordinator/domain/attempt_start.h
//
// Starting a new attempt of a PENDING trial, shared by the single-worker lease
// (TrialLifecycle::LeaseNextTrial) and the gang lease (GangLeases): the trial's attempt counter
// moves on, the attempt row is inserted LEASED with a full lease period, and the Lease a worker gets
// is filled in (checkpoint folder, the earlier attempts' folders to resume from). The caller moves
// the trial to LEASED with its event (the reason differs) in the same transaction.
//
// Thread safety: as tables.h (the caller holds the Store's mutex).
#pragma once

#include <cstdint>
#include <string>

#include "coordinator/store/store_types.h"
#include "coordinator/store/tables/tables.h"

namespace rung::domain {

// <artifact_root>/<sweep name>/<trial index>/attempt-<n>
std::string CheckpointDir(const std::string& artifact_root, const std::string& sweep_name, int64_t trial_index,
                          int64_t attempt);

// Inserts attempt trial.attempt + 1 held by `worker_id` (for a gang: rank 0's worker) and returns
// its lease (cpus and gpus: the whole trial's; a gang lease narrows them to one rank). Updates
// trial.attempt.
StatusOr<Lease> StartAttempt(Tables& tables, TrialRecord& trial, const std::string& worker_id);

// The earlier attempts of a trial, newest first, as a lease names them to resume from.
std::vector<PreviousAttempt> ResumePoints(const std::vector<AttemptRecord>& earlier);

}  // namespace rung::domain
