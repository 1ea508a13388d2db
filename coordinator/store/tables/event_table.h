// coordinator/store/tables/event_table.h
//
// The events table, written: who changed what, when and why (event_log.h reads it back). Typed
// writes, no rules; which changes get which event is the domain's.
//
// Thread safety: as database.h (used inside a Store transaction only; tables.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/store/store_types.h"
#include "core/common/status.h"

namespace rung {

class Database;

class EventTable {
 public:
  explicit EventTable(Database& db) : db_(db) {}

  // Inserts `event` (its id is assigned; empty from/to states are stored as NULL).
  Status Append(const EventRecord& event);
  // The reason of the trial's newest trial_state or trial_waiting event; nullopt when it has none.
  StatusOr<std::optional<std::string>> LatestStateReason(int64_t trial_id);
  // The reasons of the sweep's events of `kind`, oldest first.
  StatusOr<std::vector<std::string>> SweepReasons(int64_t sweep_id, const std::string& kind);

 private:
  Database& db_;
};

}  // namespace rung
