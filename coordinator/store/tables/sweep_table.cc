// coordinator/store/tables/sweep_table.cc
#include "coordinator/store/tables/sweep_table.h"

#include "coordinator/store/database.h"
#include "coordinator/store/internal/records.h"

namespace rung {

using store_internal::PolicyToJson;

StatusOr<SweepRecord> SweepTable::Get(int64_t sweep_id) { return store_internal::LoadSweep(db_, sweep_id); }

StatusOr<std::optional<SweepRecord>> SweepTable::FindByName(const std::string& name) {
  return store_internal::SelectOne<SweepRecord>(db_, "WHERE name = ?", name);
}

StatusOr<std::vector<SweepRecord>> SweepTable::List() {
  return store_internal::Select<SweepRecord>(db_, "ORDER BY id");
}

StatusOr<int64_t> SweepTable::Insert(const SweepSubmission& submission, Timestamp now) {
  RUNG_ASSIGN_OR_RETURN(Statement insert,
                        db_.Prepare("INSERT INTO sweeps(name, spec_text, spec_hash, state, policy, baseline, "
                                    "created_at, updated_at, spec_file_name, description, metric_name, metric_goal, tuning, "
                                    "precision) VALUES (?1, ?2, ?3, 'ACTIVE', ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"));
  insert.BindAll(submission.name, submission.spec_text, submission.spec_hash, PolicyToJson(submission.policy).dump(),
                 submission.baseline.dump(), ToUnixMicros(now), submission.spec_file_name, submission.description,
                 submission.metric.name, submission.metric.goal, submission.tuning, submission.precision);
  RUNG_RETURN_IF_ERROR(insert.Run());
  return db_.LastInsertRowId();
}

Status SweepTable::UpdateSpec(int64_t sweep_id, const SweepSubmission& submission, Timestamp now) {
  return db_.Run(
      "UPDATE sweeps SET spec_text = ?2, spec_hash = ?3, policy = ?4, baseline = ?5, updated_at = ?6, "
      "spec_file_name = ?7, description = ?8, metric_name = ?9, metric_goal = ?10, tuning = ?11, precision = ?12 "
      "WHERE id = ?1",
      sweep_id, submission.spec_text, submission.spec_hash, PolicyToJson(submission.policy).dump(),
      submission.baseline.dump(), ToUnixMicros(now), submission.spec_file_name, submission.description,
      submission.metric.name, submission.metric.goal, submission.tuning, submission.precision);
}

Status SweepTable::SetTuning(int64_t sweep_id, const std::string& tuning, Timestamp now) {
  return db_.Run("UPDATE sweeps SET tuning = ?, updated_at = ? WHERE id = ?", tuning, ToUnixMicros(now), sweep_id);
}

Status SweepTable::SetPrecision(int64_t sweep_id, const std::string& precision, Timestamp now) {
  return db_.Run("UPDATE sweeps SET precision = ?, updated_at = ? WHERE id = ?", precision, ToUnixMicros(now),
                 sweep_id);
}

StatusOr<std::vector<SweepRecord>> SweepTable::Searching() {
  return store_internal::Select<SweepRecord>(db_, "WHERE tuning = 'searching' OR precision = 'aiming' ORDER BY id");
}

Status SweepTable::SetState(int64_t sweep_id, SweepState state, Timestamp now) {
  return db_.Run("UPDATE sweeps SET state = ?, updated_at = ? WHERE id = ?", SweepStateName(state), ToUnixMicros(now),
                 sweep_id);
}

Status SweepTable::SetTag(int64_t sweep_id, const std::string& key, const std::string& value) {
  return db_.Run(
      "INSERT INTO tags(sweep_id, key, value) VALUES (?1, ?2, ?3) ON CONFLICT(sweep_id, key) DO UPDATE SET value = "
      "?3",
      sweep_id, key, value);
}

StatusOr<std::map<std::string, std::string>> SweepTable::Tags(int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(Statement query, db_.Prepare("SELECT key, value FROM tags WHERE sweep_id = ? ORDER BY key"));
  query.Bind(1, sweep_id);
  RUNG_ASSIGN_OR_RETURN(
      auto rows, store_internal::ReadRows<std::pair<std::string, std::string>>(
                     query, [](const Statement& row) { return std::make_pair(row.ColumnText(0), row.ColumnText(1)); }));
  return std::map<std::string, std::string>(rows.begin(), rows.end());
}

}  // namespace rung
