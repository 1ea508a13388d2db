// coordinator/store/tables/pace_table.cc
#include "coordinator/store/tables/pace_table.h"

#include "coordinator/store/database.h"

namespace rung {

StatusOr<std::optional<int64_t>> PaceTable::NewestStep(int64_t trial_id, const std::string& name) {
  // MAX over the key's prefix (trial_id, name): one probe of the primary key.
  RUNG_ASSIGN_OR_RETURN(Statement newest, db_.Prepare("SELECT MAX(step) FROM metrics WHERE trial_id = ? AND name = ?"));
  newest.BindAll(trial_id, name);
  RUNG_ASSIGN_OR_RETURN(bool found, newest.Step());
  if (!found) return std::optional<int64_t>();
  return newest.ColumnOptionalInt64(0);
}

StatusOr<std::optional<StepPace>> PaceTable::NewestOfTrial(int64_t trial_id, const std::string& name) {
  RUNG_ASSIGN_OR_RETURN(Statement newest,
                        db_.Prepare("SELECT attempt FROM metrics WHERE trial_id = ? AND name = ? GROUP BY attempt "
                                    "HAVING COUNT(*) >= 2 ORDER BY attempt DESC LIMIT 1"));
  newest.BindAll(trial_id, name);
  RUNG_ASSIGN_OR_RETURN(bool found, newest.Step());
  if (!found) return std::optional<StepPace>();
  return OfAttempt(trial_id, newest.ColumnInt64(0), name);
}

StatusOr<std::optional<StepPace>> PaceTable::NewestOfCell(const TrialRecord& trial, const std::string& name) {
  // Tokens per step compared as a ratio, t.tokens / t.steps = tokens / steps, multiplied out.
  RUNG_ASSIGN_OR_RETURN(
      Statement attempts,
      db_.Prepare("SELECT a.trial_id, a.attempt FROM attempts a JOIN trials t ON t.id = a.trial_id "
                  "WHERE t.sweep_id = ?1 AND t.rung_label = ?2 AND t.tokens * ?4 = ?3 * t.steps AND t.cpus = ?5 AND "
                  "t.gpus = ?6 AND t.world_size = ?7 ORDER BY a.leased_at DESC, a.trial_id DESC, a.attempt DESC"));
  attempts.BindAll(trial.sweep_id, trial.cell.rung_label, trial.cell.tokens, trial.cell.steps, trial.cell.cpus,
                   trial.cell.gpus, trial.cell.world_size);
  while (true) {
    RUNG_ASSIGN_OR_RETURN(bool has_row, attempts.Step());
    if (!has_row) return std::optional<StepPace>();
    RUNG_ASSIGN_OR_RETURN(std::optional<StepPace> pace,
                          OfAttempt(attempts.ColumnInt64(0), attempts.ColumnInt64(1), name));
    if (pace) return pace;
  }
}

StatusOr<std::optional<StepPace>> PaceTable::OfAttempt(int64_t trial_id, int64_t attempt, const std::string& name) {
  RUNG_ASSIGN_OR_RETURN(
      Statement pace,
      db_.Prepare("SELECT span.first, span.last, first.wall_time, last.wall_time FROM (SELECT MIN(step) AS first, "
                  "MAX(step) AS last, COUNT(*) AS points FROM metrics WHERE trial_id = ?1 AND name = ?2 AND "
                  "attempt = ?3) AS span "
                  "JOIN metrics first ON first.trial_id = ?1 AND first.name = ?2 AND first.step = span.first AND "
                  "first.attempt = ?3 "
                  "JOIN metrics last ON last.trial_id = ?1 AND last.name = ?2 AND last.step = span.last AND "
                  "last.attempt = ?3 WHERE span.points >= 2"));
  pace.BindAll(trial_id, name, attempt);
  RUNG_ASSIGN_OR_RETURN(bool found, pace.Step());
  if (!found) return std::optional<StepPace>();
  StepPace measured;
  measured.trial_id = trial_id;
  measured.attempt = attempt;
  measured.steps = pace.ColumnInt64(1) - pace.ColumnInt64(0);
  measured.seconds = pace.ColumnDouble(3) - pace.ColumnDouble(2);
  RUNG_ASSIGN_OR_RETURN(Statement start,
                        db_.Prepare("SELECT started_at - leased_at FROM attempts WHERE trial_id = ? AND attempt = ? "
                                    "AND started_at IS NOT NULL"));
  start.BindAll(trial_id, attempt);
  RUNG_ASSIGN_OR_RETURN(bool started, start.Step());
  if (started) measured.start_seconds = static_cast<double>(start.ColumnInt64(0)) / 1e6;  // unix micros
  return std::optional<StepPace>(measured);
}

}  // namespace rung
