#include "coordinator/store/metric_store.h"

#include <cmath>
#include <limits>

#include "coordinator/store/internal/attempt_fence.h"
#include "coordinator/store/internal/records.h"
#include "coordinator/store/internal/results.h"

namespace rung {
namespace {

using store_internal::ReadRows;

// SQLite stores NaN as NULL; read it back as NaN.
double ValueOrNan(const Statement& row, int column) {
  return row.ColumnOptionalDouble(column).value_or(std::numeric_limits<double>::quiet_NaN());
}

// True when every point is stored already, with the same value, for this attempt.
StatusOr<bool> AllStored(Database& db, int64_t trial_id, int64_t attempt, const std::vector<MetricPoint>& points) {
  StatusOr<Statement> find = db.Prepare(
      "SELECT 1 FROM metrics WHERE trial_id = ? AND name = ? AND step = ? AND attempt = ? AND value IS ?");
  if (!find.ok()) return find.status();
  for (const MetricPoint& point : points) {
    find->Reset();
    find->BindAll(trial_id, point.name, point.step, attempt, point.value);
    StatusOr<bool> found = find->Step();
    if (!found.ok()) return found.status();
    if (!*found) return false;
  }
  return true;
}

}  // namespace

StatusOr<int64_t> MetricStore::AppendMetrics(int64_t trial_id, int64_t attempt, const std::vector<MetricPoint>& points) {
  for (const MetricPoint& point : points) {
    if (point.name.empty()) return Status::InvalidArgument("a metric point needs a name");
    if (point.step < 0) return Status::InvalidArgument("metric " + point.name + ": step must be >= 0");
  }
  return store_.Write([&](Database& db, Timestamp) -> StatusOr<int64_t> {
    StatusOr<store_internal::LiveAttempt> live = store_internal::LoadLiveAttempt(db, trial_id, attempt, "metric batch");
    if (!live.ok()) {
      if (live.status().code() != StatusCode::kFailedPrecondition) return live.status();
      StatusOr<bool> resent = AllStored(db, trial_id, attempt, points);
      if (!resent.ok()) return resent.status();
      if (*resent) return int64_t{0};
      return live.status();
    }
    return store_internal::InsertMetricPoints(db, trial_id, attempt, points);
  });
}

StatusOr<std::vector<CurvePoint>> MetricStore::Curve(int64_t trial_id, const std::string& name) const {
  return store_.Read([&](Database& db) -> StatusOr<std::vector<CurvePoint>> {
    // With one MAX() aggregate, SQLite takes the other columns from the row holding the maximum: the
    // newest attempt's point of each step. The primary key (trial_id, name, step, attempt) serves it.
    StatusOr<Statement> query = db.Prepare(
        "SELECT step, name, value, tokens, flops, wall_time, MAX(attempt) FROM metrics "
        "WHERE trial_id = ? AND name = ? GROUP BY step ORDER BY step");
    if (!query.ok()) return query.status();
    query->BindAll(trial_id, name);
    return ReadRows<CurvePoint>(*query, [](const Statement& row) {
      CurvePoint point;
      point.point.step = row.ColumnInt64(0);
      point.point.name = row.ColumnText(1);
      point.point.value = ValueOrNan(row, 2);
      point.point.tokens = row.ColumnInt64(3);
      point.point.flops = row.ColumnDouble(4);
      point.point.wall_time = row.ColumnDouble(5);
      point.attempt = row.ColumnInt64(6);
      return point;
    });
  });
}

StatusOr<std::vector<std::string>> MetricStore::MetricNames(int64_t trial_id) const {
  return store_.Read([&](Database& db) -> StatusOr<std::vector<std::string>> {
    StatusOr<Statement> query = db.Prepare("SELECT DISTINCT name FROM metrics WHERE trial_id = ? ORDER BY name");
    if (!query.ok()) return query.status();
    query->Bind(1, trial_id);
    return ReadRows<std::string>(*query, [](const Statement& row) { return row.ColumnText(0); });
  });
}

StatusOr<std::vector<SummaryValue>> MetricStore::Summaries(int64_t trial_id) const {
  return store_.Read([&](Database& db) -> StatusOr<std::vector<SummaryValue>> {
    StatusOr<Statement> query =
        db.Prepare("SELECT name, value, step FROM summaries WHERE trial_id = ? ORDER BY name");
    if (!query.ok()) return query.status();
    query->Bind(1, trial_id);
    return ReadRows<SummaryValue>(*query, [](const Statement& row) {
      SummaryValue summary;
      summary.name = row.ColumnText(0);
      summary.value = ValueOrNan(row, 1);
      summary.step = row.ColumnOptionalInt64(2);
      return summary;
    });
  });
}

StatusOr<std::vector<LearnedParamValue>> MetricStore::LearnedParams(int64_t trial_id) const {
  return store_.Read([&](Database& db) -> StatusOr<std::vector<LearnedParamValue>> {
    StatusOr<Statement> query = db.Prepare(
        "SELECT step, name, layer, head, idx, value, shape FROM learned_params "
        "WHERE trial_id = ?1 AND attempt = (SELECT MAX(attempt) FROM learned_params WHERE trial_id = ?1) "
        "ORDER BY step, name, layer, head, idx");
    if (!query.ok()) return query.status();
    query->Bind(1, trial_id);
    return ReadRows<LearnedParamValue>(*query, [](const Statement& row) -> StatusOr<LearnedParamValue> {
      LearnedParamValue param;
      param.step = row.ColumnInt64(0);
      param.name = row.ColumnText(1);
      param.layer = row.ColumnInt64(2);
      param.head = row.ColumnInt64(3);
      param.index = row.ColumnInt64(4);
      param.value = ValueOrNan(row, 5);
      if (!row.ColumnIsNull(6)) {
        StatusOr<nlohmann::json> shape = store_internal::ParseJsonColumn(row.ColumnText(6), "shape of " + param.name);
        if (!shape.ok()) return shape.status();
        if (!shape->is_array()) return Status::DataLoss("shape of " + param.name + " is not a JSON array");
        param.shape = shape->get<std::vector<int64_t>>();
      }
      return param;
    });
  });
}

StatusOr<std::vector<Diagnostic>> MetricStore::Diagnostics(int64_t trial_id) const {
  return store_.Read([&](Database& db) -> StatusOr<std::vector<Diagnostic>> {
    // Each name from the newest attempt that wrote it, every step (milestone), layer and head of it.
    StatusOr<Statement> query = db.Prepare(
        "SELECT d.name, d.json, d.step, d.layer, d.head FROM diagnostics d WHERE d.trial_id = ?1 AND d.attempt = "
        "(SELECT MAX(e.attempt) FROM diagnostics e WHERE e.trial_id = ?1 AND e.name = d.name) "
        "ORDER BY d.name, d.step, d.layer, d.head");
    if (!query.ok()) return query.status();
    query->Bind(1, trial_id);
    return ReadRows<Diagnostic>(*query, [](const Statement& row) -> StatusOr<Diagnostic> {
      Diagnostic diagnostic;
      diagnostic.name = row.ColumnText(0);
      diagnostic.step = row.ColumnInt64(2);
      diagnostic.layer = row.ColumnInt64(3);
      diagnostic.head = row.ColumnInt64(4);
      StatusOr<nlohmann::json> value =
          store_internal::ParseJsonColumn(row.ColumnText(1), "diagnostic " + diagnostic.name);
      if (!value.ok()) return value.status();
      diagnostic.value = std::move(value).value();
      return diagnostic;
    });
  });
}

StatusOr<std::vector<StoredLogLine>> MetricStore::Logs(int64_t trial_id, const LogFilter& filter) const {
  return store_.Read([&](Database& db) -> StatusOr<std::vector<StoredLogLine>> {
    RUNG_RETURN_IF_ERROR(store_internal::LoadTrial(db, trial_id).status());
    StatusOr<Statement> query = db.Prepare(
        "SELECT attempt, batch, line, source, at, text FROM logs "
        "WHERE trial_id = ?1 AND (?2 = 0 OR attempt = ?2) AND (attempt > ?3 OR (attempt = ?3 AND batch > ?4)) "
        "ORDER BY attempt, batch, line");
    if (!query.ok()) return query.status();
    query->BindAll(trial_id, filter.attempt, filter.after_attempt, filter.after_batch);
    return ReadRows<StoredLogLine>(*query, [](const Statement& row) {
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
