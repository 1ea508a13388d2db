// coordinator/store/internal/records.h
//
// Reading records out of the store's tables, for the managers' implementations only. Each record
// type has a Table<Record> that names its table, its columns (in the order Read expects) and reads
// one row; Select/SelectOne run "SELECT <columns> FROM <table> <clauses>" with bound parameters, so
// every query that loads a record reads the same columns the same way.
//
// Example:
//   StatusOr<std::vector<TrialRecord>> pending =
//       Select<TrialRecord>(db, "WHERE sweep_id = ? AND state = 'PENDING' ORDER BY id", sweep_id);
//
// Thread safety: as database.h (the caller holds the Store's mutex).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coordinator/store/database.h"
#include "coordinator/store/store_types.h"

namespace rung::store_internal {

// A REAL column that may be NULL: SQLite stores NaN as NULL, so NULL reads back as NaN.
double ValueOrNan(const Statement& row, int column);

// JSON text from a column; DATA_LOSS (naming `what`) when it does not parse.
StatusOr<nlohmann::json> ParseJsonColumn(const std::string& text, const std::string& what);

nlohmann::json PolicyToJson(const PolicyConfig& policy);
PolicyConfig PolicyFromJson(const nlohmann::json& json);  // missing keys keep PolicyConfig's defaults

template <typename Record>
struct Table;

template <>
struct Table<SweepRecord> {
  static constexpr char kName[] = "sweeps";
  static constexpr char kColumns[] =
      "sweeps.id, sweeps.name, sweeps.spec_text, sweeps.spec_hash, sweeps.state, sweeps.policy, sweeps.baseline, "
      "sweeps.created_at, sweeps.updated_at, sweeps.spec_file_name, sweeps.description, sweeps.metric_name, "
      "sweeps.metric_goal, sweeps.tuning, sweeps.precision";
  static StatusOr<SweepRecord> Read(const Statement& row);
};

// The columns of a trial but its two JSON ones, in the order both Tables read them.
#define RUNG_TRIAL_HEADER_COLUMNS                                                                           \
  "trials.id, trials.sweep_id, trials.trial_index, trials.state, trials.attempt, trials.priority, "         \
  "trials.failures, trials.created_at, trials.updated_at, trials.identity, trials.rung, trials.rung_label, " \
  "trials.variant, trials.xi, trials.seed, trials.n_nonembedding, trials.n_total, trials.tokens, "          \
  "trials.flops, trials.cpus, trials.gpus, trials.steps, trials.world_size, trials.early_stop"

template <>
struct Table<TrialRecord> {
  static constexpr char kName[] = "trials";
  static constexpr char kColumns[] = RUNG_TRIAL_HEADER_COLUMNS ", trials.config_json, trials.assignments";
  static constexpr int kColumnCount = 26;  // kColumns' columns: a query's own columns come after them
  static StatusOr<TrialRecord> Read(const Statement& row);
};

// A trial without its config and assignments (cell.config and cell.assignments stay empty
// objects): what the lifecycle's transitions and fences read, without parsing any JSON.
struct TrialHeader : TrialRecord {};

template <>
struct Table<TrialHeader> {
  static constexpr char kName[] = "trials";
  static constexpr char kColumns[] = RUNG_TRIAL_HEADER_COLUMNS;
  static StatusOr<TrialHeader> Read(const Statement& row);
};

template <>
struct Table<AttemptRecord> {
  static constexpr char kName[] = "attempts";
  static constexpr char kColumns[] =
      "attempts.trial_id, attempts.attempt, attempts.worker_id, attempts.state, attempts.leased_at, "
      "attempts.lease_expires_at, attempts.checkpoint_dir, attempts.provenance, attempts.started_at, "
      "attempts.ended_at, attempts.exit_reason, attempts.batches";
  static StatusOr<AttemptRecord> Read(const Statement& row);
};

template <>
struct Table<WorkerRecord> {
  static constexpr char kName[] = "workers";
  static constexpr char kColumns[] =
      "workers.id, workers.host, workers.cpus, workers.gpus, workers.registered_at, workers.last_seen_at, "
      "workers.details, workers.quarantined_at, workers.quarantine_reason, workers.stops_at";
  static StatusOr<WorkerRecord> Read(const Statement& row);
};

template <>
struct Table<WorkerEnding> {
  static constexpr char kName[] = "worker_endings";
  static constexpr char kColumns[] =
      "worker_endings.id, worker_endings.worker_id, worker_endings.trial_id, worker_endings.attempt, "
      "worker_endings.ended_at, worker_endings.outcome, worker_endings.exit_code, worker_endings.worker_fault, "
      "worker_endings.refunded";
  static StatusOr<WorkerEnding> Read(const Statement& row);
};

template <>
struct Table<EventRecord> {
  static constexpr char kName[] = "events";
  static constexpr char kColumns[] =
      "events.id, events.at, events.sweep_id, events.trial_id, events.attempt, events.kind, events.from_state, "
      "events.to_state, events.actor, events.reason";
  static StatusOr<EventRecord> Read(const Statement& row);
};

// Every row of `statement` (parameters bound), each read by `read(statement)`, which returns a Value
// or a StatusOr<Value> (the first error ends the reading).
template <typename Value, typename Reader>
StatusOr<std::vector<Value>> ReadRows(Statement& statement, Reader read) {
  std::vector<Value> values;
  while (true) {
    RUNG_ASSIGN_OR_RETURN(bool has_row, statement.Step());
    if (!has_row) return values;
    // `read` returns a Value or a StatusOr<Value>: the conversion makes both one.
    RUNG_ASSIGN_OR_RETURN(Value value, StatusOr<Value>(read(statement)));
    values.push_back(std::move(value));
  }
}

// SELECT <Record's columns> FROM <Record's table> <clauses>, `parameters` bound to its ?s in order.
template <typename Record, typename... Parameters>
StatusOr<std::vector<Record>> Select(Database& db, std::string_view clauses, const Parameters&... parameters) {
  RUNG_ASSIGN_OR_RETURN(Statement statement, db.Prepare(std::string("SELECT ") + Table<Record>::kColumns + " FROM " +
                                                        Table<Record>::kName + " " + std::string(clauses)));
  statement.BindAll(parameters...);
  return ReadRows<Record>(statement, &Table<Record>::Read);
}

// The first row Select would return, or nullopt.
template <typename Record, typename... Parameters>
StatusOr<std::optional<Record>> SelectOne(Database& db, std::string_view clauses, const Parameters&... parameters) {
  RUNG_ASSIGN_OR_RETURN(std::vector<Record> records, Select<Record>(db, clauses, parameters...));
  if (records.empty()) return std::optional<Record>();
  return std::optional<Record>(std::move(records.front()));
}

// By primary key; NOT_FOUND with a message naming what is missing.
StatusOr<SweepRecord> LoadSweep(Database& db, int64_t sweep_id);
StatusOr<TrialRecord> LoadTrial(Database& db, int64_t trial_id);
StatusOr<TrialRecord> LoadTrialHeader(Database& db, int64_t trial_id);  // see TrialHeader
StatusOr<AttemptRecord> LoadAttempt(Database& db, int64_t trial_id, int64_t attempt);

// "trial 12 (sweep 'lerope-vs-rope', index 3)": how messages name a trial.
std::string DescribeTrial(Database& db, const TrialRecord& trial);

}  // namespace rung::store_internal
