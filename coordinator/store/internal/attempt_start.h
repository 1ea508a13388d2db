// coordinator/store/internal/attempt_start.h
//
// Starting a new attempt of a PENDING trial, shared by the single-worker lease
// (TrialLifecycle::LeaseNextTrial) and the gang lease (GangLeases): the trial's attempt counter
// moves on, the attempt row is inserted LEASED with a full lease period, and the Lease a worker gets
// is filled in (checkpoint folder, the earlier attempts' folders to resume from). The caller moves
// the trial to LEASED with its event (the reason differs) in the same transaction.
//
// Thread safety: as database.h (the caller holds the Store's mutex).
#pragma once

#include <string>

#include "coordinator/store/database.h"
#include "coordinator/store/store.h"
#include "coordinator/store/store_types.h"

namespace rung::store_internal {

// <artifact_root>/<sweep name>/<trial index>/attempt-<n>
std::string CheckpointDir(const std::string& artifact_root, const std::string& sweep_name, int64_t trial_index,
                          int64_t attempt);

// Inserts attempt trial.attempt + 1 held by `worker_id` (for a gang: rank 0's worker) and returns
// its lease (cpus and gpus: the whole trial's; a gang lease narrows them to one rank). Updates
// trial.attempt.
StatusOr<Lease> StartAttempt(Database& db, TrialRecord& trial, const std::string& worker_id,
                             const StoreOptions& options, Timestamp now);

// Sets workers.last_seen_at of `worker_id` to `now`.
Status TouchWorker(Database& db, const std::string& worker_id, Timestamp now);

}  // namespace rung::store_internal
