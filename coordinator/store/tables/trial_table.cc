// coordinator/store/tables/trial_table.cc
#include "coordinator/store/tables/trial_table.h"

#include "coordinator/store/database.h"
#include "coordinator/store/internal/records.h"

namespace rung {
namespace {

using store_internal::Select;
using store_internal::SelectOne;
using store_internal::TrialHeader;

// The trial columns a submission sets from a TrialCell (all but identity), in BindCell's order.
constexpr const char* kCellColumns[] = {"config_json", "rung",           "rung_label", "variant",    "xi",
                                        "seed",        "n_nonembedding", "n_total",    "tokens",     "flops",
                                        "cpus",        "gpus",           "steps",      "world_size", "assignments"};
constexpr int kCellColumnCount = sizeof(kCellColumns) / sizeof(kCellColumns[0]);

// Binds `cell` to parameters first, first + 1, ... in kCellColumns' order.
void BindCell(Statement& statement, int first, const TrialCell& cell) {
  int index = first;
  statement.Bind(index++, cell.config.dump());
  statement.Bind(index++, cell.rung);
  statement.Bind(index++, cell.rung_label);
  statement.Bind(index++, cell.variant);
  statement.Bind(index++, cell.xi);
  statement.Bind(index++, cell.seed);
  statement.Bind(index++, cell.n_nonembedding);
  statement.Bind(index++, cell.n_total);
  statement.Bind(index++, cell.tokens);
  statement.Bind(index++, cell.flops);
  statement.Bind(index++, cell.cpus);
  statement.Bind(index++, cell.gpus);
  statement.Bind(index++, cell.steps);
  statement.Bind(index++, cell.world_size);
  statement.Bind(index++, cell.assignments.dump());
}

// "?8, ?9, ..." for kCellColumns bound from `first`, or "name = ?8, ..." with `assign`.
std::string CellColumns(int first, bool assign) {
  std::string text;
  for (int column = 0; column < kCellColumnCount; ++column) {
    if (column > 0) text += ", ";
    if (assign) text += std::string(kCellColumns[column]) + " = ";
    text += "?" + std::to_string(first + column);
  }
  return text;
}

std::string CellColumnList() {
  std::string columns;
  for (int column = 0; column < kCellColumnCount; ++column)
    columns += (column > 0 ? ", " : "") + std::string(kCellColumns[column]);
  return columns;
}

}  // namespace

StatusOr<TrialRecord> TrialTable::Get(int64_t trial_id) { return store_internal::LoadTrial(db_, trial_id); }

StatusOr<TrialRecord> TrialTable::Header(int64_t trial_id) { return store_internal::LoadTrialHeader(db_, trial_id); }

StatusOr<std::string> TrialTable::ConfigText(int64_t trial_id) {
  RUNG_ASSIGN_OR_RETURN(Statement config, db_.Prepare("SELECT config_json FROM trials WHERE id = ?"));
  config.Bind(1, trial_id);
  RUNG_ASSIGN_OR_RETURN(bool found, config.Step());
  if (!found) return Status::NotFound("trial " + std::to_string(trial_id) + " does not exist");
  return config.ColumnText(0);
}

std::string TrialTable::Describe(const TrialRecord& trial) { return store_internal::DescribeTrial(db_, trial); }

StatusOr<std::vector<TrialRecord>> TrialTable::OfSweep(int64_t sweep_id, std::optional<TrialState> state) {
  return Select<TrialRecord>(db_, "WHERE sweep_id = ?1 AND (?2 IS NULL OR state = ?2) ORDER BY trial_index", sweep_id,
                             state ? std::optional<std::string>(TrialStateName(*state)) : std::nullopt);
}

StatusOr<std::vector<TrialRecord>> TrialTable::UnfinishedOfSweep(int64_t sweep_id) {
  return Select<TrialRecord>(
      db_, "WHERE sweep_id = ? AND state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED', 'EARLY_STOPPED') ORDER BY id", sweep_id);
}

StatusOr<std::vector<TrialRecord>> TrialTable::FailedOfSweep(int64_t sweep_id) {
  return Select<TrialRecord>(db_, "WHERE sweep_id = ? AND state = 'FAILED' ORDER BY id", sweep_id);
}

StatusOr<std::optional<TrialRecord>> TrialTable::NextLeasable(int64_t free_cpus, int64_t free_gpus,
                                                              const std::string& for_worker) {
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> next, Leasable(free_cpus, free_gpus, for_worker, 1));
  if (next.empty()) return std::optional<TrialRecord>();
  return std::optional<TrialRecord>(std::move(next.front()));
}

StatusOr<std::vector<TrialRecord>> TrialTable::Leasable(int64_t free_cpus, int64_t free_gpus,
                                                        const std::string& for_worker, int64_t limit) {
  constexpr char kLeasable[] =
      "JOIN sweeps ON sweeps.id = trials.sweep_id "
      "WHERE trials.state = 'PENDING' AND sweeps.state = 'ACTIVE' AND trials.cpus <= ?1 AND trials.gpus <= ?2 ";
  constexpr char kOrder[] = "ORDER BY trials.priority DESC, trials.id LIMIT ?4";
  // Whether the trial's last attempt failed on the worker ?3 for a worker's reason.
  constexpr char kFaulted[] =
      "EXISTS (SELECT 1 FROM worker_endings e WHERE e.trial_id = trials.id AND e.attempt = trials.attempt AND "
      "e.worker_id = ?3 AND e.worker_fault = 1) ";
  std::vector<TrialRecord> leasable;
  if (for_worker.empty()) {
    RUNG_ASSIGN_OR_RETURN(std::vector<TrialHeader> headers,
                          Select<TrialHeader>(db_, std::string(kLeasable) + kOrder, free_cpus, free_gpus, nullptr, limit));
    leasable.assign(headers.begin(), headers.end());
    return leasable;
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialHeader> headers,
                        Select<TrialHeader>(db_, std::string(kLeasable) + "AND NOT " + kFaulted + kOrder, free_cpus,
                                            free_gpus, for_worker, limit));
  leasable.assign(headers.begin(), headers.end());
  if (static_cast<int64_t>(leasable.size()) >= limit) return leasable;
  // Then the trials whose last attempt failed on this worker: the one whose fault is oldest first.
  RUNG_ASSIGN_OR_RETURN(
      headers, Select<TrialHeader>(db_,
                                   std::string(kLeasable) + "AND " + kFaulted +
                                       "ORDER BY (SELECT MAX(e.id) FROM worker_endings e WHERE e.trial_id = "
                                       "trials.id AND e.worker_id = ?3), trials.priority DESC, trials.id LIMIT ?4",
                                   free_cpus, free_gpus, for_worker, limit - static_cast<int64_t>(leasable.size())));
  leasable.insert(leasable.end(), headers.begin(), headers.end());
  return leasable;
}

StatusOr<std::vector<TrialRecord>> TrialTable::PendingGangs() {
  return Select<TrialRecord>(
      db_,
      "JOIN sweeps ON sweeps.id = trials.sweep_id WHERE trials.state = 'PENDING' AND "
      "sweeps.state = 'ACTIVE' AND trials.world_size > 1 ORDER BY trials.priority DESC, trials.id");
}

StatusOr<std::vector<TrialRecord>> TrialTable::PendingBeyondEveryWorker() {
  return Select<TrialRecord>(db_,
                             "JOIN sweeps ON sweeps.id = trials.sweep_id WHERE trials.state = 'PENDING' AND "
                             "sweeps.state = 'ACTIVE' AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.cpus >= "
                             "trials.cpus AND w.gpus >= trials.gpus)");
}

StatusOr<int64_t> TrialTable::Insert(int64_t sweep_id, int64_t trial_index, const TrialCell& cell, int64_t priority,
                                     Timestamp now) {
  RUNG_ASSIGN_OR_RETURN(
      Statement insert,
      db_.Prepare("INSERT INTO trials(sweep_id, trial_index, identity, state, priority, created_at, "
                  "updated_at, " +
                  CellColumnList() + ") VALUES (?1, ?2, ?3, 'PENDING', ?4, ?5, ?5, " + CellColumns(6, false) + ")"));
  insert.BindAll(sweep_id, trial_index, cell.identity, priority, ToUnixMicros(now));
  BindCell(insert, 6, cell);
  RUNG_RETURN_IF_ERROR(insert.Run());
  return db_.LastInsertRowId();
}

Status TrialTable::UpdateCell(int64_t trial_id, const TrialCell& cell, int64_t priority, Timestamp now) {
  RUNG_ASSIGN_OR_RETURN(Statement update, db_.Prepare("UPDATE trials SET " + CellColumns(4, true) +
                                                      ", priority = ?2, updated_at = ?3 WHERE id = ?1"));
  update.BindAll(trial_id, priority, ToUnixMicros(now));
  BindCell(update, 4, cell);
  return update.Run();
}

Status TrialTable::SetState(int64_t trial_id, TrialState state, Timestamp now) {
  return db_.Run("UPDATE trials SET state = ?, updated_at = ? WHERE id = ?", TrialStateName(state), ToUnixMicros(now),
                 trial_id);
}

Status TrialTable::SetEarlyStop(int64_t trial_id, std::optional<EarlyStop> why) {
  if (!why) return db_.Run("UPDATE trials SET early_stop = NULL WHERE id = ?", trial_id);
  return db_.Run("UPDATE trials SET early_stop = ? WHERE id = ?", std::string(EarlyStopName(*why)), trial_id);
}

Status TrialTable::SetAttempt(int64_t trial_id, int64_t attempt) {
  return db_.Run("UPDATE trials SET attempt = ? WHERE id = ?", attempt, trial_id);
}

Status TrialTable::AddFailure(int64_t trial_id) {
  return db_.Run("UPDATE trials SET failures = failures + 1 WHERE id = ?", trial_id);
}

Status TrialTable::ClearFailures(int64_t trial_id) {
  return db_.Run("UPDATE trials SET failures = 0 WHERE id = ?", trial_id);
}

Status TrialTable::RemoveFailure(int64_t trial_id) {
  return db_.Run("UPDATE trials SET failures = MAX(0, failures - 1) WHERE id = ?", trial_id);
}

StatusOr<TrialCounts> TrialTable::Counts(int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(Statement count,
                        db_.Prepare("SELECT COUNT(*), COALESCE(SUM(state = 'FAILED'), 0), "
                                    "COALESCE(SUM(state = 'SUCCEEDED'), 0), "
                                    "COALESCE(SUM(state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED', 'EARLY_STOPPED')), 0) "
                                    "FROM trials WHERE sweep_id = ?"));
  count.Bind(1, sweep_id);
  RUNG_RETURN_IF_ERROR(count.Step());
  TrialCounts counts;
  counts.total = count.ColumnInt64(0);
  counts.failed = count.ColumnInt64(1);
  counts.succeeded = count.ColumnInt64(2);
  counts.unfinished = count.ColumnInt64(3);
  return counts;
}

StatusOr<int64_t> TrialTable::CountFailed(int64_t sweep_id) {
  return db_.QueryInt64("SELECT COUNT(*) FROM trials WHERE sweep_id = ? AND state = 'FAILED'", sweep_id);
}

StatusOr<bool> TrialTable::HasUnfinished(int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(int64_t unfinished,
                        db_.QueryInt64("SELECT EXISTS (SELECT 1 FROM trials WHERE sweep_id = ? "
                                       "AND state IN ('PENDING', 'LEASED', 'RUNNING', 'PREEMPTED', 'STALE'))",
                                       sweep_id));
  return unfinished != 0;
}

StatusOr<std::map<TrialState, int64_t>> TrialTable::CountByState(int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(Statement count,
                        db_.Prepare("SELECT state, COUNT(*) FROM trials WHERE sweep_id = ? GROUP BY state"));
  count.Bind(1, sweep_id);
  RUNG_ASSIGN_OR_RETURN(auto rows, store_internal::ReadRows<std::pair<TrialState, int64_t>>(
                                       count, [](const Statement& row) -> StatusOr<std::pair<TrialState, int64_t>> {
                                         StatusOr<TrialState> state = ParseTrialState(row.ColumnText(0));
                                         if (!state.ok()) return Status::DataLoss(state.status().message());
                                         return std::make_pair(*state, row.ColumnInt64(1));
                                       }));
  return std::map<TrialState, int64_t>(rows.begin(), rows.end());
}

}  // namespace rung
