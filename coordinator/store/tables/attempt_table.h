// coordinator/store/tables/attempt_table.h
//
// The attempts table: one row per lease of a trial (trial_id, attempt), with its worker, state,
// lease expiry, checkpoint folder, provenance, batches committed and the digest of the report
// that ended it. Typed reads and writes, no rules (fencing is coordinator/domain/attempt_fence.h).
//
// Thread safety: as database.h (used inside a Store transaction only; tables.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/clock.h"
#include "coordinator/store/store_types.h"
#include "core/common/status.h"

namespace rung {

class Database;

class AttemptTable {
 public:
  explicit AttemptTable(Database& db) : db_(db) {}

  StatusOr<std::optional<AttemptRecord>> Find(int64_t trial_id, int64_t attempt);
  // NOT_FOUND naming the attempt.
  StatusOr<AttemptRecord> Get(int64_t trial_id, int64_t attempt);
  // The trial's attempts, oldest first.
  StatusOr<std::vector<AttemptRecord>> OfTrial(int64_t trial_id);
  // The trial's attempts up to `up_to` (all: nullopt), newest first.
  StatusOr<std::vector<AttemptRecord>> OfTrialNewestFirst(int64_t trial_id, std::optional<int64_t> up_to = std::nullopt);
  // LEASED or RUNNING attempts whose lease expired by `now`, by trial.
  StatusOr<std::vector<AttemptRecord>> ExpiredLive(Timestamp now);
  // The trials whose live attempt `worker_id` holds, or runs an unfinished rank of (a gang), by id.
  StatusOr<std::vector<int64_t>> LiveTrialsOf(const std::string& worker_id);
  // The earliest expiry of a live lease, of attempts and of unfinished gang ranks > 0; nullopt: none.
  StatusOr<std::optional<Timestamp>> EarliestLiveExpiry();
  // True when the attempt ended with `outcome` by a report with this digest.
  StatusOr<bool> EndedBy(int64_t trial_id, int64_t attempt, TrialState outcome, const std::string& report_digest);

  // A LEASED attempt held by `worker_id`.
  Status Insert(int64_t trial_id, int64_t attempt, const std::string& worker_id, Timestamp leased_at,
                Timestamp lease_expires_at, const std::string& checkpoint_dir);
  // RUNNING since `now`, with the trainer's provenance (JSON text; "" = not known).
  Status SetRunning(int64_t trial_id, int64_t attempt, Timestamp now, const std::string& provenance_json);
  Status SetBatches(int64_t trial_id, int64_t attempt, int64_t batches);
  Status RenewLease(int64_t trial_id, int64_t attempt, Timestamp expires);
  // Every live attempt's lease, and their gang ranks', expires at `expires`; returns how many attempts.
  StatusOr<int64_t> RenewEveryLiveLease(Timestamp expires);
  // Ends the attempt with `outcome` at `now`; `report_digest` ("" = none) identifies the report that
  // ended it. INTERNAL when there is no such attempt.
  Status End(int64_t trial_id, int64_t attempt, TrialState outcome, const std::string& reason,
             const std::string& report_digest, Timestamp now);

 private:
  Database& db_;
};

}  // namespace rung
