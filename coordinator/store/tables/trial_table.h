// coordinator/store/tables/trial_table.h
//
// The trials table: typed reads and writes, no rules. A trial is read whole (TrialRecord) or as
// its header (Header: without its config and assignments, so without parsing JSON), which is
// what the lifecycle's fences and transitions need.
//
// Thread safety: as database.h (used inside a Store transaction only; tables.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/clock.h"
#include "coordinator/store/store_types.h"
#include "core/common/status.h"

namespace rung {

class Database;

// How a sweep's trials stand, for settling its state.
struct TrialCounts {
  int64_t total = 0;
  int64_t failed = 0;  // FAILED for good
  int64_t succeeded = 0;
  int64_t unfinished = 0;  // not SUCCEEDED, FAILED or CANCELLED
};

class TrialTable {
 public:
  explicit TrialTable(Database& db) : db_(db) {}

  // NOT_FOUND naming the trial.
  StatusOr<TrialRecord> Get(int64_t trial_id);
  StatusOr<TrialRecord> Header(int64_t trial_id);
  // The trial's config as stored (JSON text, passed on without parsing).
  StatusOr<std::string> ConfigText(int64_t trial_id);
  // "trial 12 (sweep 'lerope-vs-rope', index 3)": how messages name a trial.
  std::string Describe(const TrialRecord& trial);

  // The sweep's trials by trial_index, all or those in `state`.
  StatusOr<std::vector<TrialRecord>> OfSweep(int64_t sweep_id, std::optional<TrialState> state = std::nullopt);
  // The sweep's trials not SUCCEEDED, FAILED or CANCELLED, by id.
  StatusOr<std::vector<TrialRecord>> UnfinishedOfSweep(int64_t sweep_id);
  // The sweep's FAILED trials, by id.
  StatusOr<std::vector<TrialRecord>> FailedOfSweep(int64_t sweep_id);

  // The PENDING trial of an ACTIVE sweep, highest priority first, oldest among equals, whose cpus
  // and gpus fit; as a header. nullopt when none fits. With `for_worker`, trials whose last attempt
  // failed on that worker for a worker's reason (worker_endings.worker_fault) come after every other,
  // and among them the one it failed longest ago comes first.
  StatusOr<std::optional<TrialRecord>> NextLeasable(int64_t free_cpus, int64_t free_gpus,
                                                    const std::string& for_worker = "");
  // The first `limit` (> 0) leasable trials in NextLeasable's order (the first is NextLeasable's), as
  // headers: for a worker that cannot take every trial (coordinator/domain/allocation_fit.h).
  StatusOr<std::vector<TrialRecord>> Leasable(int64_t free_cpus, int64_t free_gpus, const std::string& for_worker,
                                              int64_t limit);
  // PENDING trials of ACTIVE sweeps with world_size > 1, by priority then age.
  StatusOr<std::vector<TrialRecord>> PendingGangs();
  // PENDING trials of ACTIVE sweeps that no registered worker holds whole.
  StatusOr<std::vector<TrialRecord>> PendingBeyondEveryWorker();

  // Inserts a PENDING trial of `cell`; returns its id.
  StatusOr<int64_t> Insert(int64_t sweep_id, int64_t trial_index, const TrialCell& cell, int64_t priority,
                           Timestamp now);
  // The trial takes `cell` (same identity) and `priority`.
  Status UpdateCell(int64_t trial_id, const TrialCell& cell, int64_t priority, Timestamp now);
  Status SetState(int64_t trial_id, TrialState state, Timestamp now);
  // Why the trial was stopped early; nullopt clears it (the trial is queued again).
  Status SetEarlyStop(int64_t trial_id, std::optional<EarlyStop> why);
  Status SetAttempt(int64_t trial_id, int64_t attempt);
  Status AddFailure(int64_t trial_id);
  Status ClearFailures(int64_t trial_id);
  Status RemoveFailure(int64_t trial_id);  // one fewer (never below 0)

  StatusOr<TrialCounts> Counts(int64_t sweep_id);
  // The sweep's trials FAILED for good: an index range, not a scan of the sweep.
  StatusOr<int64_t> CountFailed(int64_t sweep_id);
  // Whether any trial of the sweep is unfinished: one index probe per unfinished state.
  StatusOr<bool> HasUnfinished(int64_t sweep_id);
  StatusOr<std::map<TrialState, int64_t>> CountByState(int64_t sweep_id);

 private:
  Database& db_;
};

}  // namespace rung
