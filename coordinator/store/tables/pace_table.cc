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

StatusOr<std::optional<int64_t>> PaceTable::NewestPreemptedStep(int64_t trial_id, const std::string& name) {
  RUNG_ASSIGN_OR_RETURN(Statement newest,
                        db_.Prepare("SELECT MAX(attempt) FROM attempts WHERE trial_id = ? AND state = 'PREEMPTED'"));
  newest.BindAll(trial_id);
  RUNG_ASSIGN_OR_RETURN(bool found, newest.Step());
  if (!found) return std::optional<int64_t>();
  const std::optional<int64_t> attempt = newest.ColumnOptionalInt64(0);
  if (!attempt) return std::optional<int64_t>();
  // From the trial's newest step down: the attempts after it (which did not end PREEMPTED) come first.
  RUNG_ASSIGN_OR_RETURN(Statement step,
                        db_.Prepare("SELECT step FROM metrics WHERE trial_id = ? AND name = ? AND attempt = ? "
                                    "ORDER BY step DESC LIMIT 1"));
  step.BindAll(trial_id, name, *attempt);
  RUNG_ASSIGN_OR_RETURN(bool has_step, step.Step());
  if (!has_step) return std::optional<int64_t>();
  return std::optional<int64_t>(step.ColumnInt64(0));
}

StatusOr<std::optional<StepPace>> PaceTable::NewestOfTrial(int64_t trial_id, const std::string& name) {
  // The attempts' own table, newest first (a trial has few); each pace a bounded read.
  RUNG_ASSIGN_OR_RETURN(Statement attempts,
                        db_.Prepare("SELECT attempt FROM attempts WHERE trial_id = ? ORDER BY attempt DESC"));
  attempts.BindAll(trial_id);
  while (true) {
    RUNG_ASSIGN_OR_RETURN(bool has_row, attempts.Step());
    if (!has_row) return std::optional<StepPace>();
    RUNG_ASSIGN_OR_RETURN(std::optional<StepPace> pace, OfAttempt(trial_id, attempts.ColumnInt64(0), name));
    if (pace) return pace;
  }
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
  RUNG_ASSIGN_OR_RETURN(Statement points,
                        db_.Prepare("SELECT step, wall_time FROM metrics WHERE trial_id = ? AND name = ? AND "
                                    "attempt = ? ORDER BY step DESC LIMIT ?"));
  points.BindAll(trial_id, name, attempt, static_cast<int64_t>(kPacePoints));
  int64_t count = 0, last_step = 0, first_step = 0;
  double last_wall = 0, first_wall = 0;
  while (true) {
    RUNG_ASSIGN_OR_RETURN(bool has_row, points.Step());
    if (!has_row) break;
    if (count == 0) {
      last_step = points.ColumnInt64(0);
      last_wall = points.ColumnDouble(1);
    }
    first_step = points.ColumnInt64(0);
    first_wall = points.ColumnDouble(1);
    ++count;
  }
  if (count < 2) return std::optional<StepPace>();
  StepPace measured;
  measured.trial_id = trial_id;
  measured.attempt = attempt;
  measured.steps = last_step - first_step;
  measured.seconds = last_wall - first_wall;
  RUNG_ASSIGN_OR_RETURN(Statement start,
                        db_.Prepare("SELECT started_at - leased_at FROM attempts WHERE trial_id = ? AND attempt = ? "
                                    "AND started_at IS NOT NULL"));
  start.BindAll(trial_id, attempt);
  RUNG_ASSIGN_OR_RETURN(bool started, start.Step());
  if (started) measured.start_seconds = static_cast<double>(start.ColumnInt64(0)) / 1e6;  // unix micros
  return std::optional<StepPace>(measured);
}

}  // namespace rung
