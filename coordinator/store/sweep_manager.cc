#include "coordinator/store/sweep_manager.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "coordinator/store/event_log.h"
#include "coordinator/store/internal/records.h"
#include "coordinator/store/internal/transitions.h"

namespace rung {
namespace {

using store_internal::Cause;

// The trial columns a submission sets from a TrialCell (all but identity), in BindCell's order.
constexpr const char* kCellColumns[] = {"config_json", "rung",  "rung_label", "variant", "xi",
                                        "seed",        "n_nonembedding", "n_total", "tokens", "flops",
                                        "cpus",        "gpus",  "steps", "world_size", "assignments"};
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

// "?8, ?9, ..." for kCellColumns bound from `first`.
std::string CellPlaceholders(int first) {
  std::string placeholders;
  for (int column = 0; column < kCellColumnCount; ++column) {
    if (column > 0) placeholders += ", ";
    placeholders += "?" + std::to_string(first + column);
  }
  return placeholders;
}

std::string CellColumnList() {
  std::string columns;
  for (int column = 0; column < kCellColumnCount; ++column) {
    if (column > 0) columns += ", ";
    columns += kCellColumns[column];
  }
  return columns;
}

Status InsertTrial(Database& db, int64_t sweep_id, int64_t trial_index, const TrialCell& cell, int64_t priority,
                   Timestamp now) {
  StatusOr<Statement> insert = db.Prepare(
      "INSERT INTO trials(sweep_id, trial_index, identity, state, priority, created_at, updated_at, " +
      CellColumnList() + ") VALUES (?1, ?2, ?3, 'PENDING', ?4, ?5, ?5, " + CellPlaceholders(6) + ")");
  if (!insert.ok()) return insert.status();
  insert->BindAll(sweep_id, trial_index, cell.identity, priority, ToUnixMicros(now));
  BindCell(*insert, 6, cell);
  return insert->Run();
}

// A PENDING trial takes a resubmitted spec's version of its cell (same identity).
Status UpdateTrialCell(Database& db, int64_t trial_id, const TrialCell& cell, int64_t priority, Timestamp now) {
  std::string assignments;
  for (int column = 0; column < kCellColumnCount; ++column) {
    assignments += std::string(kCellColumns[column]) + " = ?" + std::to_string(4 + column) + ", ";
  }
  StatusOr<Statement> update =
      db.Prepare("UPDATE trials SET " + assignments + "priority = ?2, updated_at = ?3 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->BindAll(trial_id, priority, ToUnixMicros(now));
  BindCell(*update, 4, cell);
  return update->Run();
}

bool IsValidSweepName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                         c == '_' || c == '.';
    if (!allowed) return false;
  }
  return true;
}

Status ValidateSubmission(const SweepSubmission& submission) {
  if (!IsValidSweepName(submission.name)) {
    return Status::InvalidArgument("sweep name '" + submission.name +
                                   "' must be letters, digits, '-', '_' or '.' (it names the checkpoint folder)");
  }
  if (submission.trials.empty()) return Status::InvalidArgument("sweep " + submission.name + " has no trials");
  for (size_t position = 0; position < submission.trials.size(); ++position) {
    const TrialCell& cell = submission.trials[position];
    const std::string which = "sweep " + submission.name + ", trial " + std::to_string(position);
    if (cell.identity.empty()) return Status::InvalidArgument(which + " has no identity");
    if (!cell.config.is_object()) return Status::InvalidArgument(which + ": config must be a JSON object");
    if (cell.cpus < 0 || cell.gpus < 0) return Status::InvalidArgument(which + ": cpus and gpus must be >= 0");
  }
  return Status::Ok();
}

// The submission's cells, each identity once (the first occurrence); repeats go to `duplicates`.
std::vector<const TrialCell*> UniqueCells(const SweepSubmission& submission, std::vector<std::string>* duplicates) {
  std::vector<const TrialCell*> cells;
  std::set<std::string> seen;
  for (const TrialCell& cell : submission.trials) {
    if (seen.insert(cell.identity).second) {
      cells.push_back(&cell);
    } else {
      duplicates->push_back(cell.identity);
    }
  }
  return cells;
}

StatusOr<SubmitResult> CreateSweep(Database& db, const SweepSubmission& submission, const std::string& actor,
                                   Timestamp now) {
  StatusOr<Statement> insert = db.Prepare(
      "INSERT INTO sweeps(name, spec_text, spec_hash, state, policy, baseline, created_at, updated_at, "
      "spec_file_name, description, metric_name, metric_goal) "
      "VALUES (?1, ?2, ?3, 'ACTIVE', ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10)");
  if (!insert.ok()) return insert.status();
  insert->BindAll(submission.name, submission.spec_text, submission.spec_hash,
                  store_internal::PolicyToJson(submission.policy).dump(), submission.baseline.dump(), ToUnixMicros(now),
                  submission.spec_file_name, submission.description, submission.metric.name, submission.metric.goal);
  RUNG_RETURN_IF_ERROR(insert->Run());

  SubmitResult result;
  result.sweep_id = db.LastInsertRowId();
  result.created = true;
  int64_t trial_index = 0;
  for (const TrialCell* cell : UniqueCells(submission, &result.duplicates)) {
    RUNG_RETURN_IF_ERROR(InsertTrial(db, result.sweep_id, trial_index++, *cell, submission.policy.priority, now));
    result.added.push_back(cell->identity);
    result.trial_ids[cell->identity] = db.LastInsertRowId();
  }

  EventRecord event;
  event.at = now;
  event.sweep_id = result.sweep_id;
  event.kind = event_kind::kSweepSubmitted;
  event.to_state = SweepStateName(SweepState::kActive);
  event.actor = actor;
  event.reason = "submitted with " + std::to_string(result.added.size()) + " trials (spec " + submission.spec_hash + ")";
  RUNG_RETURN_IF_ERROR(store_internal::AppendEvent(db, event));
  return result;
}

StatusOr<SubmitResult> ResubmitSweep(Database& db, SweepRecord sweep, const SweepSubmission& submission,
                                     const std::string& actor, Timestamp now) {
  SubmitResult result;
  result.sweep_id = sweep.id;
  StatusOr<std::vector<TrialRecord>> existing =
      store_internal::Select<TrialRecord>(db, "WHERE sweep_id = ? ORDER BY trial_index", sweep.id);
  if (!existing.ok()) return existing.status();
  std::unordered_map<std::string, TrialRecord*> by_identity;
  int64_t next_index = 0;
  for (TrialRecord& trial : *existing) {
    by_identity[trial.cell.identity] = &trial;
    next_index = std::max(next_index, trial.trial_index + 1);
  }

  const Cause resubmitted{actor, "resubmitted"};
  std::set<std::string> submitted;
  for (const TrialCell* cell : UniqueCells(submission, &result.duplicates)) {
    submitted.insert(cell->identity);
    auto found = by_identity.find(cell->identity);
    if (found == by_identity.end()) {
      RUNG_RETURN_IF_ERROR(InsertTrial(db, sweep.id, next_index++, *cell, submission.policy.priority, now));
      result.added.push_back(cell->identity);
      result.trial_ids[cell->identity] = db.LastInsertRowId();
      continue;
    }
    TrialRecord& trial = *found->second;
    result.trial_ids[cell->identity] = trial.id;
    if (trial.state == TrialState::kSucceeded) {
      result.skipped_succeeded.push_back(cell->identity);
    } else if (IsLive(trial.state)) {
      result.unchanged.push_back(cell->identity);
    } else {  // PENDING, FAILED or CANCELLED: not running, so it takes the new spec's cell
      RUNG_RETURN_IF_ERROR(UpdateTrialCell(db, trial.id, *cell, submission.policy.priority, now));
      if (trial.state == TrialState::kPending) {
        result.unchanged.push_back(cell->identity);
      } else {
        RUNG_RETURN_IF_ERROR(store_internal::RequeueByUser(db, trial, resubmitted, now));
        result.requeued.push_back(cell->identity);
      }
    }
  }
  const Cause removed{actor, "removed from the spec by a resubmission"};
  for (TrialRecord& trial : *existing) {
    if (submitted.count(trial.cell.identity)) continue;
    result.removed.push_back(trial.cell.identity);
    result.removed_trials.push_back(trial);
    if (!IsTerminal(trial.state)) RUNG_RETURN_IF_ERROR(store_internal::CancelTrial(db, trial, removed, now));
  }

  StatusOr<Statement> update = db.Prepare(
      "UPDATE sweeps SET spec_text = ?2, spec_hash = ?3, policy = ?4, baseline = ?5, updated_at = ?6, "
      "spec_file_name = ?7, description = ?8, metric_name = ?9, metric_goal = ?10 WHERE id = ?1");
  if (!update.ok()) return update.status();
  update->BindAll(sweep.id, submission.spec_text, submission.spec_hash,
                  store_internal::PolicyToJson(submission.policy).dump(), submission.baseline.dump(), ToUnixMicros(now),
                  submission.spec_file_name, submission.description, submission.metric.name, submission.metric.goal);
  RUNG_RETURN_IF_ERROR(update->Run());

  EventRecord event;
  event.at = now;
  event.sweep_id = sweep.id;
  event.kind = event_kind::kSweepResubmitted;
  event.actor = actor;
  event.reason = "spec " + sweep.spec_hash + " -> " + submission.spec_hash + ": " +
                 std::to_string(result.added.size()) + " new, " + std::to_string(result.skipped_succeeded.size()) +
                 " succeeded (skipped), " + std::to_string(result.requeued.size()) + " requeued, " +
                 std::to_string(result.unchanged.size()) + " unchanged, " + std::to_string(result.removed.size()) +
                 " removed";
  RUNG_RETURN_IF_ERROR(store_internal::AppendEvent(db, event));

  if (sweep.state == SweepState::kCancelled) {
    RUNG_RETURN_IF_ERROR(store_internal::MoveSweep(db, sweep, SweepState::kActive, resubmitted, now));
  }
  RUNG_RETURN_IF_ERROR(store_internal::SettleSweep(db, sweep.id, actor, now));
  return result;
}

StatusOr<SubmitResult> SubmitOrResubmit(Database& db, const SweepSubmission& submission, const std::string& actor,
                                        Timestamp now) {
  StatusOr<std::optional<SweepRecord>> existing =
      store_internal::SelectOne<SweepRecord>(db, "WHERE name = ?", submission.name);
  if (!existing.ok()) return existing.status();
  if (!*existing) return CreateSweep(db, submission, actor, now);
  return ResubmitSweep(db, std::move(**existing), submission, actor, now);
}

std::string ReasonOr(const std::string& reason, const std::string& fallback) {
  return reason.empty() ? fallback : reason;
}

}  // namespace

StatusOr<SubmitResult> SweepManager::Submit(const SweepSubmission& submission, const std::string& actor) {
  RUNG_RETURN_IF_ERROR(ValidateSubmission(submission));
  return store_.Write(
      [&](Database& db, Timestamp now) { return SubmitOrResubmit(db, submission, actor, now); });
}

StatusOr<SubmitResult> SweepManager::Preview(const SweepSubmission& submission, const std::string& actor) const {
  RUNG_RETURN_IF_ERROR(ValidateSubmission(submission));
  return store_.Preview(
      [&](Database& db, Timestamp now) { return SubmitOrResubmit(db, submission, actor, now); });
}

StatusOr<SweepRecord> SweepManager::Get(int64_t sweep_id) const {
  return store_.Read([&](Database& db) { return store_internal::LoadSweep(db, sweep_id); });
}

StatusOr<SweepRecord> SweepManager::FindByName(const std::string& name) const {
  return store_.Read([&](Database& db) -> StatusOr<SweepRecord> {
    StatusOr<std::optional<SweepRecord>> sweep = store_internal::SelectOne<SweepRecord>(db, "WHERE name = ?", name);
    if (!sweep.ok()) return sweep.status();
    if (!*sweep) return Status::NotFound("no sweep is named '" + name + "'");
    return std::move(**sweep);
  });
}

StatusOr<std::vector<SweepRecord>> SweepManager::List() const {
  return store_.Read([&](Database& db) { return store_internal::Select<SweepRecord>(db, "ORDER BY id"); });
}

StatusOr<std::map<TrialState, int64_t>> SweepManager::CountTrialsByState(int64_t sweep_id) const {
  return store_.Read([&](Database& db) -> StatusOr<std::map<TrialState, int64_t>> {
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    StatusOr<Statement> count = db.Prepare("SELECT state, COUNT(*) FROM trials WHERE sweep_id = ? GROUP BY state");
    if (!count.ok()) return count.status();
    count->Bind(1, sweep_id);
    StatusOr<std::vector<std::pair<TrialState, int64_t>>> rows = store_internal::ReadRows<std::pair<TrialState, int64_t>>(
        *count, [](const Statement& row) -> StatusOr<std::pair<TrialState, int64_t>> {
          StatusOr<TrialState> state = ParseTrialState(row.ColumnText(0));
          if (!state.ok()) return Status::DataLoss(state.status().message());
          return std::make_pair(*state, row.ColumnInt64(1));
        });
    if (!rows.ok()) return rows.status();
    return std::map<TrialState, int64_t>(rows->begin(), rows->end());
  });
}

Status SweepManager::Pause(int64_t sweep_id, const std::string& actor, const std::string& reason) {
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, sweep_id);
    if (!sweep.ok()) return sweep.status();
    if (sweep->state == SweepState::kPaused) return Status::Ok();
    if (sweep->state != SweepState::kActive) {
      return Status::FailedPrecondition("sweep " + sweep->name + " is " + SweepStateName(sweep->state) +
                                        ": only an ACTIVE sweep can be paused");
    }
    return store_internal::MoveSweep(db, *sweep, SweepState::kPaused, {actor, ReasonOr(reason, "paused")}, now);
  });
}

Status SweepManager::Resume(int64_t sweep_id, const std::string& actor, const std::string& reason) {
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, sweep_id);
    if (!sweep.ok()) return sweep.status();
    if (sweep->state == SweepState::kActive) return Status::Ok();
    if (sweep->state != SweepState::kPaused) {
      return Status::FailedPrecondition("sweep " + sweep->name + " is " + SweepStateName(sweep->state) +
                                        ": only a PAUSED sweep can be resumed");
    }
    return store_internal::MoveSweep(db, *sweep, SweepState::kActive, {actor, ReasonOr(reason, "resumed")}, now);
  });
}

Status SweepManager::Cancel(int64_t sweep_id, const std::string& actor, const std::string& reason) {
  return store_.Write([&](Database& db, Timestamp now) -> Status {
    StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, sweep_id);
    if (!sweep.ok()) return sweep.status();
    if (sweep->state == SweepState::kCancelled) return Status::Ok();
    if (sweep->state == SweepState::kSucceeded) {
      return Status::FailedPrecondition("sweep " + sweep->name + " already SUCCEEDED: nothing to cancel");
    }
    const Cause cause{actor, ReasonOr(reason, "sweep cancelled")};
    StatusOr<std::vector<TrialRecord>> unfinished = store_internal::Select<TrialRecord>(
        db, "WHERE sweep_id = ? AND state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED') ORDER BY id", sweep_id);
    if (!unfinished.ok()) return unfinished.status();
    for (TrialRecord& trial : *unfinished) RUNG_RETURN_IF_ERROR(store_internal::CancelTrial(db, trial, cause, now));
    return store_internal::MoveSweep(db, *sweep, SweepState::kCancelled, cause, now);
  });
}

StatusOr<int64_t> SweepManager::RetryFailed(int64_t sweep_id, const std::string& actor) {
  StatusOr<std::vector<int64_t>> retried = RetryTrials(sweep_id, {}, actor);
  if (!retried.ok()) return retried.status();
  return static_cast<int64_t>(retried->size());
}

StatusOr<std::vector<int64_t>> SweepManager::RetryTrials(int64_t sweep_id, const std::vector<int64_t>& trial_ids,
                                                         const std::string& actor, const std::string& reason) {
  return store_.Write([&](Database& db, Timestamp now) -> StatusOr<std::vector<int64_t>> {
    StatusOr<SweepRecord> sweep = store_internal::LoadSweep(db, sweep_id);
    if (!sweep.ok()) return sweep.status();
    if (sweep->state == SweepState::kCancelled) {
      return Status::FailedPrecondition("sweep " + sweep->name + " was CANCELLED: resubmit its spec to run it again");
    }
    std::vector<TrialRecord> chosen;
    if (trial_ids.empty()) {
      StatusOr<std::vector<TrialRecord>> failed =
          store_internal::Select<TrialRecord>(db, "WHERE sweep_id = ? AND state = 'FAILED' ORDER BY id", sweep_id);
      if (!failed.ok()) return failed.status();
      chosen = std::move(failed).value();
    }
    for (int64_t trial_id : trial_ids) {
      StatusOr<TrialRecord> trial = store_internal::LoadTrial(db, trial_id);
      if (!trial.ok()) return trial.status();
      if (trial->sweep_id != sweep_id) {
        return Status::InvalidArgument(store_internal::DescribeTrial(db, *trial) + " is not a trial of sweep " +
                                       sweep->name);
      }
      if (trial->state != TrialState::kFailed) {
        return Status::FailedPrecondition(store_internal::DescribeTrial(db, *trial) + " is " +
                                          TrialStateName(trial->state) +
                                          ": only FAILED trials can be retried (nothing was changed)");
      }
      chosen.push_back(std::move(trial).value());
    }
    const Cause cause{actor, ReasonOr(reason, trial_ids.empty() ? "retry of the sweep's failed trials" : "retried")};
    std::vector<int64_t> retried;
    for (TrialRecord& trial : chosen) {
      RUNG_RETURN_IF_ERROR(store_internal::RequeueByUser(db, trial, cause, now));
      retried.push_back(trial.id);
    }
    RUNG_RETURN_IF_ERROR(store_internal::SettleSweep(db, sweep_id, actor, now));
    return retried;
  });
}

Status SweepManager::SetTag(int64_t sweep_id, const std::string& key, const std::string& value) {
  if (key.empty()) return Status::InvalidArgument("a tag needs a key");
  return store_.Write([&](Database& db, Timestamp) -> Status {
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    StatusOr<Statement> upsert = db.Prepare(
        "INSERT INTO tags(sweep_id, key, value) VALUES (?1, ?2, ?3) ON CONFLICT(sweep_id, key) DO UPDATE SET value = ?3");
    if (!upsert.ok()) return upsert.status();
    upsert->BindAll(sweep_id, key, value);
    return upsert->Run();
  });
}

StatusOr<std::map<std::string, std::string>> SweepManager::Tags(int64_t sweep_id) const {
  return store_.Read([&](Database& db) -> StatusOr<std::map<std::string, std::string>> {
    StatusOr<Statement> query = db.Prepare("SELECT key, value FROM tags WHERE sweep_id = ? ORDER BY key");
    if (!query.ok()) return query.status();
    query->Bind(1, sweep_id);
    StatusOr<std::vector<std::pair<std::string, std::string>>> rows =
        store_internal::ReadRows<std::pair<std::string, std::string>>(
            *query, [](const Statement& row) { return std::make_pair(row.ColumnText(0), row.ColumnText(1)); });
    if (!rows.ok()) return rows.status();
    return std::map<std::string, std::string>(rows->begin(), rows->end());
  });
}

}  // namespace rung
