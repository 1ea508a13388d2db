// coordinator/store/tables/sweep_table.h
//
// The sweeps table and its tags: typed reads and writes, no rules. Which state a sweep may move to,
// and the event that records it, are the domain's (coordinator/domain/transitions.h).
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

class SweepTable {
 public:
  explicit SweepTable(Database& db) : db_(db) {}

  // NOT_FOUND naming the sweep.
  StatusOr<SweepRecord> Get(int64_t sweep_id);
  StatusOr<std::optional<SweepRecord>> FindByName(const std::string& name);
  // Every sweep, by id.
  StatusOr<std::vector<SweepRecord>> List();

  // A new ACTIVE sweep of `submission`'s spec, policy, baseline and metric; returns its id.
  StatusOr<int64_t> Insert(const SweepSubmission& submission, Timestamp now);
  // The sweep takes `submission`'s spec, policy, baseline and metric (a resubmission).
  Status UpdateSpec(int64_t sweep_id, const SweepSubmission& submission, Timestamp now);
  Status SetState(int64_t sweep_id, SweepState state, Timestamp now);
  // SweepRecord::tuning.
  Status SetTuning(int64_t sweep_id, const std::string& tuning, Timestamp now);
  // SweepRecord::precision.
  Status SetPrecision(int64_t sweep_id, const std::string& precision, Timestamp now);
  // The sweeps whose decisions are open (tuning = "searching" or precision = "aiming"), by id.
  StatusOr<std::vector<SweepRecord>> Searching();

  // Sets (inserts or replaces) one tag.
  Status SetTag(int64_t sweep_id, const std::string& key, const std::string& value);
  StatusOr<std::map<std::string, std::string>> Tags(int64_t sweep_id);

 private:
  Database& db_;
};

}  // namespace rung
