// coordinator/store/metric_store.cc
#include "coordinator/store/metric_store.h"

#include <cmath>
#include <limits>

#include "coordinator/store/internal/records.h"
#include "coordinator/store/tables/tables.h"

namespace rung {
namespace {

using store_internal::ReadRows;
using store_internal::ValueOrNan;


}  // namespace

StatusOr<std::vector<CurvePoint>> MetricStore::Curve(int64_t trial_id, const std::string& name) const {
  return store_.Read([&](Tables& tables) { return tables.outputs().Curve(trial_id, name); });
}

Status MetricStore::ForEachSweepCurve(int64_t sweep_id, const std::vector<std::string>& names,
                                      const std::vector<int64_t>& trial_ids,
                                      const std::function<Status(TrialCurve&&)>& visit) const {
  return store_.Read([&](Tables& tables) -> Status {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    // (An invalid UTF-8 name is replaced, so it matches nothing, rather than throwing.)
    const std::string names_json = nlohmann::json(names).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const std::string trials_json = nlohmann::json(trial_ids).dump();
    if (!trial_ids.empty()) {
      RUNG_ASSIGN_OR_RETURN(
          Statement outside,
          db.Prepare("SELECT value FROM json_each(?2) WHERE value NOT IN (SELECT id FROM trials WHERE sweep_id = ?1) "
                     "LIMIT 1"));
      outside.BindAll(sweep_id, trials_json);
      RUNG_ASSIGN_OR_RETURN(bool found, outside.Step());
      if (found) {
        return Status::InvalidArgument("trial " + std::to_string(outside.ColumnInt64(0)) + " is not a trial of sweep " +
                                       std::to_string(sweep_id) + " (`rung trials " + std::to_string(sweep_id) +
                                       "` lists them)");
      }
    }
    // The metrics' primary key (trial_id, name, step, attempt) delivers the rows of the sweep's trials
    // (trials(sweep_id, ...) finds them; IN lists are walked in order) already in that order, with no
    // sort; a step reported by several attempts keeps the newest attempt's point (as OutputTable::Curve),
    // which is the last of its adjacent rows.
    RUNG_ASSIGN_OR_RETURN(
        Statement query,
        db.Prepare("SELECT m.trial_id, m.name, m.step, m.value, m.tokens, m.flops, m.wall_time, m.attempt "
                   "FROM metrics m "
                   "WHERE m.trial_id IN (SELECT id FROM trials WHERE sweep_id = ?1 "
                   "                     AND (?3 = '[]' OR id IN (SELECT value FROM json_each(?3)))) "
                   "AND m.name IN (SELECT value FROM json_each(?2)) "
                   "ORDER BY m.trial_id, m.name, m.step, m.attempt"));
    query.BindAll(sweep_id, names_json, trials_json);
    TrialCurve curve;
    while (true) {
      RUNG_ASSIGN_OR_RETURN(bool has_row, query.Step());
      const int64_t trial_id = has_row ? query.ColumnInt64(0) : 0;
      const bool same_curve = has_row && !curve.points.empty() && trial_id == curve.trial_id &&
                              query.ColumnTextView(1) == curve.name;
      if (!curve.points.empty() && !same_curve) {
        RUNG_RETURN_IF_ERROR(visit(std::move(curve)));
        curve = TrialCurve();
      }
      if (!has_row) return Status::Ok();
      if (curve.points.empty()) {
        curve.trial_id = trial_id;
        curve.name = query.ColumnText(1);
      }
      CurvePoint point;
      point.point.step = query.ColumnInt64(2);
      point.point.value = ValueOrNan(query, 3);
      point.point.tokens = query.ColumnInt64(4);
      point.point.flops = query.ColumnDouble(5);
      point.point.wall_time = query.ColumnDouble(6);
      point.attempt = query.ColumnInt64(7);
      if (!curve.points.empty() && curve.points.back().point.step == point.point.step) {
        curve.points.back() = std::move(point);  // a newer attempt's point of the same step
        continue;
      }
      curve.points.push_back(std::move(point));
    }
  });
}

StatusOr<std::vector<std::string>> MetricStore::MetricNames(int64_t trial_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<std::string>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_ASSIGN_OR_RETURN(Statement query,
                          db.Prepare("SELECT DISTINCT name FROM metrics WHERE trial_id = ? ORDER BY name"));
    query.Bind(1, trial_id);
    return ReadRows<std::string>(query, [](const Statement& row) { return row.ColumnText(0); });
  });
}

StatusOr<std::vector<SummaryValue>> MetricStore::Summaries(int64_t trial_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<SummaryValue>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_ASSIGN_OR_RETURN(Statement query,
                          db.Prepare("SELECT name, value, step FROM summaries WHERE trial_id = ? ORDER BY name"));
    query.Bind(1, trial_id);
    return ReadRows<SummaryValue>(query, [](const Statement& row) {
      SummaryValue summary;
      summary.name = row.ColumnText(0);
      summary.value = ValueOrNan(row, 1);
      summary.step = row.ColumnOptionalInt64(2);
      return summary;
    });
  });
}

StatusOr<std::vector<LearnedParamValue>> MetricStore::LearnedParams(int64_t trial_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<LearnedParamValue>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_ASSIGN_OR_RETURN(
        Statement query,
        db.Prepare("SELECT step, name, layer, head, idx, value, shape FROM learned_params "
                   "WHERE trial_id = ?1 AND attempt = (SELECT MAX(attempt) FROM learned_params WHERE trial_id = ?1) "
                   "ORDER BY step, name, layer, head, idx"));
    query.Bind(1, trial_id);
    return ReadRows<LearnedParamValue>(query, [](const Statement& row) -> StatusOr<LearnedParamValue> {
      LearnedParamValue param;
      param.step = row.ColumnInt64(0);
      param.name = row.ColumnText(1);
      param.layer = row.ColumnInt64(2);
      param.head = row.ColumnInt64(3);
      param.index = row.ColumnInt64(4);
      param.value = ValueOrNan(row, 5);
      if (!row.ColumnIsNull(6)) {
        RUNG_ASSIGN_OR_RETURN(nlohmann::json shape,
                              store_internal::ParseJsonColumn(row.ColumnText(6), "shape of " + param.name));
        if (!shape.is_array()) return Status::DataLoss("shape of " + param.name + " is not a JSON array");
        param.shape = shape.get<std::vector<int64_t>>();
      }
      return param;
    });
  });
}

StatusOr<std::vector<Diagnostic>> MetricStore::Diagnostics(int64_t trial_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<Diagnostic>> {
    Database& db = store_internal::DatabaseOf(tables);
    // Each name from the newest attempt that wrote it, every step (milestone), layer and head of it.
    RUNG_ASSIGN_OR_RETURN(
        Statement query,
        db.Prepare(
            "SELECT d.name, d.json, d.step, d.layer, d.head FROM diagnostics d WHERE d.trial_id = ?1 AND d.attempt = "
            "(SELECT MAX(e.attempt) FROM diagnostics e WHERE e.trial_id = ?1 AND e.name = d.name) "
            "ORDER BY d.name, d.step, d.layer, d.head"));
    query.Bind(1, trial_id);
    return ReadRows<Diagnostic>(query, [](const Statement& row) -> StatusOr<Diagnostic> {
      Diagnostic diagnostic;
      diagnostic.name = row.ColumnText(0);
      diagnostic.step = row.ColumnInt64(2);
      diagnostic.layer = row.ColumnInt64(3);
      diagnostic.head = row.ColumnInt64(4);
      RUNG_ASSIGN_OR_RETURN(nlohmann::json value,
                            store_internal::ParseJsonColumn(row.ColumnText(1), "diagnostic " + diagnostic.name));
      diagnostic.value = std::move(value);
      return diagnostic;
    });
  });
}

StatusOr<std::vector<StoredLogLine>> MetricStore::Logs(int64_t trial_id, const LogFilter& filter) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<StoredLogLine>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(store_internal::LoadTrial(db, trial_id).status());
    RUNG_ASSIGN_OR_RETURN(
        Statement query,
        db.Prepare(
            "SELECT attempt, batch, line, source, at, text FROM logs "
            "WHERE trial_id = ?1 AND (?2 = 0 OR attempt = ?2) AND (attempt > ?3 OR (attempt = ?3 AND batch > ?4)) "
            "ORDER BY attempt, batch, line"));
    query.BindAll(trial_id, filter.attempt, filter.after_attempt, filter.after_batch);
    return ReadRows<StoredLogLine>(query, [](const Statement& row) {
      StoredLogLine line;
      line.attempt = row.ColumnInt64(0);
      line.batch = row.ColumnInt64(1);
      line.line = row.ColumnInt64(2);
      line.log.source = row.ColumnText(3) == "stderr" ? LogSource::kStderr : LogSource::kRecord;
      line.at = FromUnixMicros(row.ColumnInt64(4));
      line.log.text = row.ColumnText(5);
      return line;
    });
  });
}

}  // namespace rung
