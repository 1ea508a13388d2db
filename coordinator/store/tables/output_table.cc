// coordinator/store/tables/output_table.cc
#include "coordinator/store/tables/output_table.h"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "coordinator/store/database.h"
#include "coordinator/store/internal/records.h"

namespace rung {

StatusOr<int64_t> OutputTable::InsertMetricPoints(int64_t trial_id, int64_t attempt,
                                                  const std::vector<MetricPoint>& points) {
  RUNG_ASSIGN_OR_RETURN(
      Statement insert,
      db_.Prepare("INSERT OR IGNORE INTO metrics(trial_id, attempt, step, name, value, tokens, flops, wall_time) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
  // A replayed value fills a gap only: the metrics key (trial_id, name, step, attempt) makes the
  // probe a prefix lookup.
  RUNG_ASSIGN_OR_RETURN(
      Statement insert_replayed,
      db_.Prepare("INSERT OR IGNORE INTO metrics(trial_id, attempt, step, name, value, tokens, flops, wall_time) "
                  "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE NOT EXISTS "
                  "(SELECT 1 FROM metrics WHERE trial_id = ?1 AND name = ?4 AND step = ?3)"));
  int64_t inserted = 0;
  for (const MetricPoint& point : points) {
    Statement& statement = point.replayed ? insert_replayed : insert;
    statement.Reset();
    statement.BindAll(trial_id, attempt, point.step, point.name, point.value, point.tokens, point.flops,
                      point.wall_time);
    RUNG_RETURN_IF_ERROR(statement.Run());
    inserted += db_.ChangedRows();
  }
  return inserted;
}

Status OutputTable::InsertResults(int64_t trial_id, int64_t attempt, const TrialResults& results) {
  RUNG_ASSIGN_OR_RETURN(
      Statement summary,
      db_.Prepare("INSERT INTO summaries(trial_id, name, value, step, attempt) VALUES (?1, ?2, ?3, ?4, ?5) "
                  "ON CONFLICT(trial_id, name) DO UPDATE SET value = ?3, step = COALESCE(?4, step), attempt = ?5"));
  for (const SummaryValue& value : results.summaries) {
    summary.Reset();
    summary.BindAll(trial_id, value.name, value.value, value.step, attempt);
    RUNG_RETURN_IF_ERROR(summary.Run());
  }
  RUNG_ASSIGN_OR_RETURN(
      Statement learned,
      db_.Prepare(
          "INSERT OR REPLACE INTO learned_params(trial_id, attempt, step, name, layer, head, idx, value, shape) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  for (const LearnedParamValue& param : results.learned_params) {
    learned.Reset();
    learned.BindAll(trial_id, attempt, param.step, param.name, param.layer, param.head, param.index, param.value,
                    param.shape ? std::optional<std::string>(nlohmann::json(*param.shape).dump()) : std::nullopt);
    RUNG_RETURN_IF_ERROR(learned.Run());
  }
  RUNG_ASSIGN_OR_RETURN(
      Statement diagnostic,
      db_.Prepare("INSERT OR REPLACE INTO diagnostics(trial_id, attempt, name, step, layer, head, json) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?)"));
  for (const Diagnostic& entry : results.diagnostics) {
    diagnostic.Reset();
    diagnostic.BindAll(trial_id, attempt, entry.name, entry.step, entry.layer, entry.head, entry.value.dump());
    RUNG_RETURN_IF_ERROR(diagnostic.Run());
  }
  return Status::Ok();
}

Status OutputTable::InsertLogLines(int64_t trial_id, int64_t attempt, int64_t batch, const std::vector<LogLine>& lines,
                                   Timestamp now) {
  if (lines.empty()) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(
      Statement insert,
      db_.Prepare(
          "INSERT OR IGNORE INTO logs(trial_id, attempt, batch, line, source, at, text) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  for (size_t line = 0; line < lines.size(); ++line) {
    insert.Reset();
    insert.BindAll(trial_id, attempt, batch, static_cast<int64_t>(line), LogSourceName(lines[line].source),
                   ToUnixMicros(now), lines[line].text);
    RUNG_RETURN_IF_ERROR(insert.Run());
  }
  return Status::Ok();
}

}  // namespace rung

namespace rung {

StatusOr<std::vector<CurvePoint>> OutputTable::Curve(int64_t trial_id, const std::string& name) {
  // With one MAX() aggregate, SQLite takes the other columns from the row holding the maximum: the
  // newest attempt's point of each step. The primary key (trial_id, name, step, attempt) serves it.
  RUNG_ASSIGN_OR_RETURN(Statement query,
                        db_.Prepare("SELECT step, name, value, tokens, flops, wall_time, MAX(attempt) FROM metrics "
                                    "WHERE trial_id = ? AND name = ? GROUP BY step ORDER BY step"));
  query.BindAll(trial_id, name);
  return store_internal::ReadRows<CurvePoint>(query, [](const Statement& row) {
    CurvePoint point;
    point.point.step = row.ColumnInt64(0);
    point.point.name = row.ColumnText(1);
    point.point.value = store_internal::ValueOrNan(row, 2);
    point.point.tokens = row.ColumnInt64(3);
    point.point.flops = row.ColumnDouble(4);
    point.point.wall_time = row.ColumnDouble(5);
    point.attempt = row.ColumnInt64(6);
    return point;
  });
}

StatusOr<std::map<int64_t, double>> OutputTable::SummaryOfSweep(int64_t sweep_id, const std::string& name) {
  RUNG_ASSIGN_OR_RETURN(Statement query,
                        db_.Prepare("SELECT summaries.trial_id, summaries.value FROM summaries JOIN trials ON "
                                    "trials.id = summaries.trial_id WHERE trials.sweep_id = ? AND summaries.name = ?"));
  query.BindAll(sweep_id, name);
  RUNG_ASSIGN_OR_RETURN(auto rows, store_internal::ReadRows<std::pair<int64_t, double>>(query, [](const Statement& row) {
    return std::make_pair(row.ColumnInt64(0), store_internal::ValueOrNan(row, 1));
  }));
  return std::map<int64_t, double>(rows.begin(), rows.end());
}

StatusOr<bool> OutputTable::HasSummaries(int64_t trial_id, int64_t attempt) {
  RUNG_ASSIGN_OR_RETURN(int64_t any, db_.QueryInt64("SELECT EXISTS (SELECT 1 FROM summaries WHERE trial_id = ? AND "
                                                    "attempt = ?)",
                                                    trial_id, attempt));
  return any != 0;
}

}  // namespace rung
