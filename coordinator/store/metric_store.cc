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
