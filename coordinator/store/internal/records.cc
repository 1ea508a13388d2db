#include "coordinator/store/internal/records.h"

#include <limits>

namespace rung::store_internal {
namespace {

std::optional<Timestamp> OptionalTime(const Statement& row, int column) {
  std::optional<int64_t> micros = row.ColumnOptionalInt64(column);
  if (!micros) return std::nullopt;
  return FromUnixMicros(*micros);
}

Timestamp Time(const Statement& row, int column) { return FromUnixMicros(row.ColumnInt64(column)); }

}  // namespace

double ValueOrNan(const Statement& row, int column) {
  return row.ColumnOptionalDouble(column).value_or(std::numeric_limits<double>::quiet_NaN());
}

StatusOr<nlohmann::json> ParseJsonColumn(const std::string& text, const std::string& what) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Status::DataLoss("stored " + what + " is not valid JSON: " + text.substr(0, 200));
  return json;
}

nlohmann::json PolicyToJson(const PolicyConfig& policy) {
  return {{"max_retries", policy.max_retries}, {"max_failed", policy.max_failed}, {"priority", policy.priority}};
}

PolicyConfig PolicyFromJson(const nlohmann::json& json) {
  PolicyConfig policy;
  policy.max_retries = json.value("max_retries", policy.max_retries);
  policy.max_failed = json.value("max_failed", policy.max_failed);
  policy.priority = json.value("priority", policy.priority);
  return policy;
}

StatusOr<SweepRecord> Table<SweepRecord>::Read(const Statement& row) {
  SweepRecord sweep;
  sweep.id = row.ColumnInt64(0);
  sweep.name = row.ColumnText(1);
  sweep.spec_text = row.ColumnText(2);
  sweep.spec_hash = row.ColumnText(3);
  StatusOr<SweepState> state = ParseSweepState(row.ColumnText(4));
  if (!state.ok()) return Status::DataLoss("sweep " + std::to_string(sweep.id) + ": " + state.status().message());
  sweep.state = *state;
  RUNG_ASSIGN_OR_RETURN(nlohmann::json policy, ParseJsonColumn(row.ColumnText(5), "policy of sweep " + sweep.name));
  sweep.policy = PolicyFromJson(policy);
  RUNG_ASSIGN_OR_RETURN(nlohmann::json baseline, ParseJsonColumn(row.ColumnText(6), "baseline of sweep " + sweep.name));
  sweep.baseline = std::move(baseline);
  sweep.created_at = Time(row, 7);
  sweep.updated_at = Time(row, 8);
  sweep.spec_file_name = row.ColumnText(9);
  sweep.description = row.ColumnText(10);
  sweep.metric.name = row.ColumnText(11);
  sweep.metric.goal = row.ColumnText(12);
  sweep.tuning = row.ColumnText(13);
  sweep.precision = row.ColumnText(14);
  return sweep;
}

StatusOr<TrialHeader> Table<TrialHeader>::Read(const Statement& row) {
  TrialHeader trial;
  trial.id = row.ColumnInt64(0);
  trial.sweep_id = row.ColumnInt64(1);
  trial.trial_index = row.ColumnInt64(2);
  StatusOr<TrialState> state = ParseTrialState(row.ColumnText(3));
  if (!state.ok()) return Status::DataLoss("trial " + std::to_string(trial.id) + ": " + state.status().message());
  trial.state = *state;
  trial.attempt = row.ColumnInt64(4);
  trial.priority = row.ColumnInt64(5);
  trial.failures = row.ColumnInt64(6);
  trial.created_at = Time(row, 7);
  trial.updated_at = Time(row, 8);
  TrialCell& cell = trial.cell;
  cell.identity = row.ColumnText(9);
  cell.rung = row.ColumnInt64(10);
  cell.rung_label = row.ColumnText(11);
  cell.variant = row.ColumnText(12);
  cell.xi = row.ColumnOptionalDouble(13);
  cell.seed = row.ColumnInt64(14);
  cell.n_nonembedding = row.ColumnInt64(15);
  cell.n_total = row.ColumnInt64(16);
  cell.tokens = row.ColumnInt64(17);
  cell.flops = row.ColumnDouble(18);
  cell.cpus = row.ColumnInt64(19);
  cell.gpus = row.ColumnInt64(20);
  cell.steps = row.ColumnInt64(21);
  cell.world_size = row.ColumnInt64(22);
  if (!row.ColumnIsNull(23)) {
    StatusOr<EarlyStop> why = ParseEarlyStop(row.ColumnText(23));
    if (!why.ok()) return Status::DataLoss("trial " + std::to_string(trial.id) + ": " + why.status().message());
    trial.early_stop = *why;
  }
  return trial;
}

StatusOr<TrialRecord> Table<TrialRecord>::Read(const Statement& row) {
  RUNG_ASSIGN_OR_RETURN(TrialHeader header, Table<TrialHeader>::Read(row));
  TrialRecord trial = std::move(header);
  const std::string what = "trial " + std::to_string(trial.id);
  RUNG_ASSIGN_OR_RETURN(nlohmann::json config, ParseJsonColumn(row.ColumnText(24), "config of " + what));
  trial.cell.config = std::move(config);
  RUNG_ASSIGN_OR_RETURN(nlohmann::json assignments, ParseJsonColumn(row.ColumnText(25), "assignments of " + what));
  trial.cell.assignments = std::move(assignments);
  return trial;
}

StatusOr<AttemptRecord> Table<AttemptRecord>::Read(const Statement& row) {
  AttemptRecord attempt;
  attempt.trial_id = row.ColumnInt64(0);
  attempt.attempt = row.ColumnInt64(1);
  const std::string what = "attempt " + std::to_string(attempt.attempt) + " of trial " + std::to_string(attempt.trial_id);
  attempt.worker_id = row.ColumnText(2);
  StatusOr<TrialState> state = ParseTrialState(row.ColumnText(3));
  if (!state.ok()) return Status::DataLoss(what + ": " + state.status().message());
  attempt.state = *state;
  attempt.leased_at = Time(row, 4);
  attempt.lease_expires_at = Time(row, 5);
  attempt.checkpoint_dir = row.ColumnText(6);
  if (!row.ColumnIsNull(7)) attempt.provenance_json = row.ColumnText(7);
  attempt.started_at = OptionalTime(row, 8);
  attempt.ended_at = OptionalTime(row, 9);
  attempt.exit_reason = row.ColumnText(10);
  attempt.batches = row.ColumnInt64(11);
  return attempt;
}

StatusOr<WorkerRecord> Table<WorkerRecord>::Read(const Statement& row) {
  WorkerRecord worker;
  worker.info.id = row.ColumnText(0);
  worker.info.host = row.ColumnText(1);
  worker.info.cpus = row.ColumnInt64(2);
  worker.info.gpus = row.ColumnInt64(3);
  worker.registered_at = Time(row, 4);
  worker.last_seen_at = Time(row, 5);
  RUNG_ASSIGN_OR_RETURN(nlohmann::json details,
                        ParseJsonColumn(row.ColumnText(6), "details of worker " + worker.info.id));
  worker.info.details = std::move(details);
  worker.quarantined_at = OptionalTime(row, 7);
  worker.quarantine_reason = row.ColumnText(8);
  worker.info.stops_at = OptionalTime(row, 9);
  return worker;
}

StatusOr<WorkerEnding> Table<WorkerEnding>::Read(const Statement& row) {
  WorkerEnding ending;
  ending.id = row.ColumnInt64(0);
  ending.worker_id = row.ColumnText(1);
  ending.trial_id = row.ColumnInt64(2);
  ending.attempt = row.ColumnInt64(3);
  ending.ended_at = Time(row, 4);
  StatusOr<TrialState> outcome = ParseTrialState(row.ColumnText(5));
  if (!outcome.ok()) {
    return Status::DataLoss("ending " + std::to_string(ending.id) + " of worker " + ending.worker_id + ": " +
                            outcome.status().message());
  }
  ending.outcome = *outcome;
  ending.exit_code = static_cast<int>(row.ColumnInt64(6));
  ending.worker_fault = row.ColumnInt64(7) != 0;
  ending.refunded = row.ColumnInt64(8) != 0;
  return ending;
}

StatusOr<EventRecord> Table<EventRecord>::Read(const Statement& row) {
  EventRecord event;
  event.id = row.ColumnInt64(0);
  event.at = Time(row, 1);
  event.sweep_id = row.ColumnOptionalInt64(2);
  event.trial_id = row.ColumnOptionalInt64(3);
  event.attempt = row.ColumnOptionalInt64(4);
  event.kind = row.ColumnText(5);
  event.from_state = row.ColumnText(6);
  event.to_state = row.ColumnText(7);
  event.actor = row.ColumnText(8);
  event.reason = row.ColumnText(9);
  return event;
}

StatusOr<SweepRecord> LoadSweep(Database& db, int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(std::optional<SweepRecord> sweep, SelectOne<SweepRecord>(db, "WHERE id = ?", sweep_id));
  if (!sweep) return Status::NotFound("sweep " + std::to_string(sweep_id) + " does not exist");
  return std::move(*sweep);
}

StatusOr<TrialRecord> LoadTrial(Database& db, int64_t trial_id) {
  RUNG_ASSIGN_OR_RETURN(std::optional<TrialRecord> trial, SelectOne<TrialRecord>(db, "WHERE id = ?", trial_id));
  if (!trial) return Status::NotFound("trial " + std::to_string(trial_id) + " does not exist");
  return std::move(*trial);
}

StatusOr<TrialRecord> LoadTrialHeader(Database& db, int64_t trial_id) {
  RUNG_ASSIGN_OR_RETURN(std::optional<TrialHeader> trial, SelectOne<TrialHeader>(db, "WHERE id = ?", trial_id));
  if (!trial) return Status::NotFound("trial " + std::to_string(trial_id) + " does not exist");
  return TrialRecord(std::move(*trial));
}

StatusOr<AttemptRecord> LoadAttempt(Database& db, int64_t trial_id, int64_t attempt) {
  RUNG_ASSIGN_OR_RETURN(std::optional<AttemptRecord> record,
                        SelectOne<AttemptRecord>(db, "WHERE trial_id = ? AND attempt = ?", trial_id, attempt));
  if (!record) {
    return Status::NotFound("trial " + std::to_string(trial_id) + " has no attempt " + std::to_string(attempt));
  }
  return std::move(*record);
}

std::string DescribeTrial(Database& db, const TrialRecord& trial) {
  std::string sweep_name = "#" + std::to_string(trial.sweep_id);
  if (StatusOr<Statement> name = db.Prepare("SELECT name FROM sweeps WHERE id = ?"); name.ok()) {
    name->Bind(1, trial.sweep_id);
    StatusOr<bool> row = name->Step();
    if (row.ok() && *row) sweep_name = "'" + name->ColumnText(0) + "'";
  }
  return "trial " + std::to_string(trial.id) + " (sweep " + sweep_name + ", index " +
         std::to_string(trial.trial_index) + ")";
}

}  // namespace rung::store_internal
