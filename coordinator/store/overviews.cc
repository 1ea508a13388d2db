#include "coordinator/store/overviews.h"

#include "coordinator/store/tables/tables.h"
#include "coordinator/store/event_log.h"
#include "coordinator/store/internal/records.h"

namespace rung {
namespace {

using store_internal::ReadRows;

template <typename State>
std::string StateList(const std::vector<State>& states, const char* (*name)(State)) {
  std::string list;
  for (State state : states) list += std::string(list.empty() ? "" : ", ") + "'" + name(state) + "'";
  return list;
}

bool IsFinished(SweepState state) {
  return state == SweepState::kSucceeded || state == SweepState::kFailed || state == SweepState::kCancelled;
}

Status FillSweep(Database& db, SweepOverview& overview) {
  const int64_t sweep_id = overview.sweep.id;
  RUNG_ASSIGN_OR_RETURN(
      Statement counts,
      db.Prepare("SELECT state, COUNT(*), COALESCE(SUM(flops), 0) FROM trials WHERE sweep_id = ? GROUP BY state"));
  counts.Bind(1, sweep_id);
  while (true) {
    RUNG_ASSIGN_OR_RETURN(bool row, counts.Step());
    if (!row) break;
    StatusOr<TrialState> state = ParseTrialState(counts.ColumnText(0));
    if (!state.ok()) return Status::DataLoss(state.status().message());
    const int64_t count = counts.ColumnInt64(1);
    const double flops = counts.ColumnDouble(2);
    overview.counts[*state] = count;
    overview.total_trials += count;
    overview.total_flops += flops;
    if (*state == TrialState::kSucceeded) overview.finished_flops += flops;
  }
  RUNG_ASSIGN_OR_RETURN(
      Statement latest,
      db.Prepare("SELECT at, reason FROM events WHERE sweep_id = ? AND trial_id IS NULL AND kind IN (?, ?, ?) "
                 "ORDER BY id DESC LIMIT 1"));
  latest.BindAll(sweep_id, event_kind::kSweepSubmitted, event_kind::kSweepResubmitted, event_kind::kSweepState);
  RUNG_ASSIGN_OR_RETURN(bool row, latest.Step());
  if (row) {
    overview.state_reason = latest.ColumnText(1);
    if (IsFinished(overview.sweep.state)) overview.finished_at = FromUnixMicros(latest.ColumnInt64(0));
  }
  return Status::Ok();
}

StatusOr<std::vector<SweepOverview>> SelectSweeps(Database& db, const std::string& clauses, int64_t bound_id,
                                                  const std::string& name, int64_t limit) {
  RUNG_ASSIGN_OR_RETURN(std::vector<SweepRecord> sweeps,
                        store_internal::Select<SweepRecord>(db, clauses, bound_id, name, limit));
  std::vector<SweepOverview> overviews;
  for (SweepRecord& sweep : sweeps) {
    SweepOverview overview;
    overview.sweep = std::move(sweep);
    RUNG_RETURN_IF_ERROR(FillSweep(db, overview));
    overviews.push_back(std::move(overview));
  }
  return overviews;
}

// The trial columns, then what a TrialOverview adds, each from an indexed lookup.
const std::string& TrialOverviewColumns() {
  static const std::string columns =
      std::string(store_internal::Table<TrialRecord>::kColumns) +
      ", (SELECT reason FROM events e WHERE e.trial_id = trials.id AND e.kind IN ('trial_state', 'trial_waiting') "
      "ORDER BY e.id DESC "
      "LIMIT 1)"
      ", (SELECT at FROM events e WHERE e.trial_id = trials.id AND e.kind = 'trial_state' ORDER BY e.id DESC LIMIT 1)"
      ", (SELECT MAX(step) FROM metrics m WHERE m.trial_id = trials.id AND m.name = 'train_loss')"
      ", (SELECT MAX(step) FROM metrics m WHERE m.trial_id = trials.id AND m.name = sweeps.metric_name)"
      ", (SELECT value FROM metrics m WHERE m.trial_id = trials.id AND m.name = sweeps.metric_name "
      "ORDER BY m.step DESC, m.attempt DESC LIMIT 1)"
      ", (SELECT value FROM summaries s WHERE s.trial_id = trials.id AND s.name = sweeps.metric_name)"
      ", (SELECT leased_at FROM attempts a WHERE a.trial_id = trials.id AND a.attempt = 1)";
  return columns;
}
constexpr int kFirstOverviewColumn = store_internal::Table<TrialRecord>::kColumnCount;

StatusOr<TrialOverview> ReadTrialOverview(const Statement& row) {
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, store_internal::Table<TrialRecord>::Read(row));
  TrialOverview overview;
  overview.trial = std::move(trial);
  const int first = kFirstOverviewColumn;
  overview.state_reason = row.ColumnText(first);
  if (IsTerminal(overview.trial.state) && !row.ColumnIsNull(first + 1)) {
    overview.finished_at = FromUnixMicros(row.ColumnInt64(first + 1));
  }
  std::optional<int64_t> train_step = row.ColumnOptionalInt64(first + 2);
  std::optional<int64_t> metric_step = row.ColumnOptionalInt64(first + 3);
  if (train_step || metric_step) overview.latest_step = std::max(train_step.value_or(0), metric_step.value_or(0));
  overview.latest_metric = row.ColumnOptionalDouble(first + 4);
  overview.final_metric = row.ColumnOptionalDouble(first + 5);
  if (!row.ColumnIsNull(first + 6)) overview.first_leased_at = FromUnixMicros(row.ColumnInt64(first + 6));
  return overview;
}

// Trial overviews of "SELECT ... FROM trials JOIN sweeps ... <clauses>", each with its newest attempt.
template <typename... Parameters>
StatusOr<std::vector<TrialOverview>> SelectTrials(Database& db, const std::string& clauses,
                                                  const Parameters&... parameters) {
  RUNG_ASSIGN_OR_RETURN(Statement query,
                        db.Prepare("SELECT " + TrialOverviewColumns() +
                                   " FROM trials JOIN sweeps ON sweeps.id = trials.sweep_id " + clauses));
  query.BindAll(parameters...);
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialOverview> overviews, ReadRows<TrialOverview>(query, &ReadTrialOverview));
  for (TrialOverview& overview : overviews) {
    if (overview.trial.attempt == 0) continue;
    RUNG_ASSIGN_OR_RETURN(AttemptRecord attempt,
                          store_internal::LoadAttempt(db, overview.trial.id, overview.trial.attempt));
    overview.attempt = std::move(attempt);
  }
  return overviews;
}

}  // namespace

StatusOr<SweepOverview> Overviews::Sweep(int64_t sweep_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<SweepOverview> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, store_internal::LoadSweep(db, sweep_id));
    SweepOverview overview;
    overview.sweep = std::move(sweep);
    RUNG_RETURN_IF_ERROR(FillSweep(db, overview));
    return overview;
  });
}

StatusOr<std::vector<SweepOverview>> Overviews::Sweeps(const SweepFilter& filter) const {
  std::string clauses = "WHERE (?1 <= 0 OR id < ?1) AND (?2 = '' OR name = ?2)";
  if (!filter.states.empty()) clauses += " AND state IN (" + StateList(filter.states, &SweepStateName) + ")";
  clauses += " ORDER BY id DESC LIMIT ?3";
  return store_.Read([&](Tables& tables) {
    Database& db = store_internal::DatabaseOf(tables);
    return SelectSweeps(db, clauses, filter.before_id, filter.name, filter.limit);
  });
}

StatusOr<TrialOverview> Overviews::Trial(int64_t trial_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<TrialOverview> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_ASSIGN_OR_RETURN(std::vector<TrialOverview> found, SelectTrials(db, "WHERE trials.id = ?", trial_id));
    if (found.empty()) return Status::NotFound("trial " + std::to_string(trial_id) + " does not exist");
    return std::move(found.front());
  });
}

StatusOr<std::vector<TrialOverview>> Overviews::Trials(int64_t sweep_id, const TrialFilter& filter) const {
  std::string clauses = "WHERE trials.sweep_id = ?1 AND trials.trial_index > ?2";
  if (!filter.states.empty()) clauses += " AND trials.state IN (" + StateList(filter.states, &TrialStateName) + ")";
  clauses += " ORDER BY trials.trial_index LIMIT ?3";
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<TrialOverview>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    return SelectTrials(db, clauses, sweep_id, filter.after_index, filter.limit);
  });
}

}  // namespace rung
