#include "coordinator/store/internal/results.h"

#include <nlohmann/json.hpp>

namespace rung::store_internal {

StatusOr<int64_t> InsertMetricPoints(Database& db, int64_t trial_id, int64_t attempt,
                                     const std::vector<MetricPoint>& points) {
  StatusOr<Statement> insert = db.Prepare(
      "INSERT OR IGNORE INTO metrics(trial_id, attempt, step, name, value, tokens, flops, wall_time) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert.ok()) return insert.status();
  int64_t inserted = 0;
  for (const MetricPoint& point : points) {
    insert->Reset();
    insert->BindAll(trial_id, attempt, point.step, point.name, point.value, point.tokens, point.flops,
                    point.wall_time);
    RUNG_RETURN_IF_ERROR(insert->Run());
    inserted += db.ChangedRows();
  }
  return inserted;
}

Status InsertResults(Database& db, int64_t trial_id, int64_t attempt, const TrialResults& results) {
  StatusOr<Statement> summary = db.Prepare(
      "INSERT INTO summaries(trial_id, name, value, step, attempt) VALUES (?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT(trial_id, name) DO UPDATE SET value = ?3, step = COALESCE(?4, step), attempt = ?5");
  if (!summary.ok()) return summary.status();
  for (const SummaryValue& value : results.summaries) {
    summary->Reset();
    summary->BindAll(trial_id, value.name, value.value, value.step, attempt);
    RUNG_RETURN_IF_ERROR(summary->Run());
  }
  StatusOr<Statement> learned = db.Prepare(
      "INSERT OR REPLACE INTO learned_params(trial_id, attempt, step, name, layer, head, idx, value, shape) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!learned.ok()) return learned.status();
  for (const LearnedParamValue& param : results.learned_params) {
    learned->Reset();
    learned->BindAll(trial_id, attempt, param.step, param.name, param.layer, param.head, param.index, param.value,
                     param.shape ? std::optional<std::string>(nlohmann::json(*param.shape).dump()) : std::nullopt);
    RUNG_RETURN_IF_ERROR(learned->Run());
  }
  StatusOr<Statement> diagnostic =
      db.Prepare("INSERT OR REPLACE INTO diagnostics(trial_id, attempt, name, step, layer, head, json) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!diagnostic.ok()) return diagnostic.status();
  for (const Diagnostic& entry : results.diagnostics) {
    diagnostic->Reset();
    diagnostic->BindAll(trial_id, attempt, entry.name, entry.step, entry.layer, entry.head, entry.value.dump());
    RUNG_RETURN_IF_ERROR(diagnostic->Run());
  }
  return Status::Ok();
}

Status InsertLogLines(Database& db, int64_t trial_id, int64_t attempt, int64_t batch,
                      const std::vector<LogLine>& lines, Timestamp now) {
  if (lines.empty()) return Status::Ok();
  StatusOr<Statement> insert = db.Prepare(
      "INSERT OR IGNORE INTO logs(trial_id, attempt, batch, line, source, at, text) VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!insert.ok()) return insert.status();
  for (size_t line = 0; line < lines.size(); ++line) {
    insert->Reset();
    insert->BindAll(trial_id, attempt, batch, static_cast<int64_t>(line), LogSourceName(lines[line].source),
                    ToUnixMicros(now), lines[line].text);
    RUNG_RETURN_IF_ERROR(insert->Run());
  }
  return Status::Ok();
}

}  // namespace rung::store_internal
