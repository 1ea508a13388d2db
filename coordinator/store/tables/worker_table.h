// coordinator/store/tables/worker_table.h
//
// The workers table (who registered, with what resources, last seen when, quarantined or not) and
// worker_endings (every attempt ending a worker reported, in order). Typed reads and writes, no
// rules (the quarantine's are coordinator/domain/worker_quarantine.h).
//
// Thread safety: as database.h (used inside a Store transaction only; tables.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/clock.h"
#include "coordinator/store/store_types.h"
#include "core/common/status.h"

namespace rung {

class Database;

class WorkerTable {
 public:
  explicit WorkerTable(Database& db) : db_(db) {}

  StatusOr<std::optional<WorkerRecord>> Find(const std::string& worker_id);
  // Every worker, by id (live_trial_ids left empty).
  StatusOr<std::vector<WorkerRecord>> List();
  // Inserts the worker, or updates its host, resources, details and stops_at (a registration without
  // one clears it); seen at `now`.
  Status Upsert(const WorkerInfo& worker, Timestamp now);
  // The worker was seen at `now`; false when it is not registered.
  StatusOr<bool> Touch(const std::string& worker_id, Timestamp now);
  // Quarantines the worker at `at` for `reason`, or (no `at`) lifts its quarantine.
  Status SetQuarantine(const std::string& worker_id, std::optional<Timestamp> at, const std::string& reason);

  // Appends an ending (its id is assigned and returned).
  StatusOr<int64_t> InsertEnding(const WorkerEnding& ending);
  // The worker's `limit` newest endings, newest first.
  StatusOr<std::vector<WorkerEnding>> RecentEndings(const std::string& worker_id, int64_t limit);
  Status MarkRefunded(int64_t ending_id);

 private:
  Database& db_;
};

}  // namespace rung
