#include "coordinator/store/fit_store.h"

#include "coordinator/store/tables/tables.h"
#include "coordinator/store/internal/records.h"

namespace rung {
namespace {

nlohmann::json PointsToJson(const std::vector<FitPointRecord>& points) {
  nlohmann::json list = nlohmann::json::array();
  for (const FitPointRecord& point : points) {
    list.push_back({{"trial_id", point.trial_id},
                    {"variant", point.variant},
                    {"label", point.label},
                    {"compute", point.compute},
                    {"loss", point.loss},
                    {"seed", point.seed}});
  }
  return list;
}

StatusOr<std::vector<FitPointRecord>> PointsFromJson(const nlohmann::json& list, int64_t fit_id) {
  if (!list.is_array()) return Status::DataLoss("fit " + std::to_string(fit_id) + ": points is not a JSON array");
  std::vector<FitPointRecord> points;
  try {
    for (const nlohmann::json& item : list) {
      FitPointRecord point;
      point.trial_id = item.at("trial_id").get<int64_t>();
      point.variant = item.at("variant").get<std::string>();
      point.label = item.at("label").get<std::string>();
      point.compute = item.at("compute").get<double>();
      point.loss = item.at("loss").get<double>();
      point.seed = item.at("seed").get<int64_t>();
      points.push_back(std::move(point));
    }
  } catch (const nlohmann::json::exception& error) {
    return Status::DataLoss("fit " + std::to_string(fit_id) + ": a point is malformed: " + error.what());
  }
  return points;
}

constexpr char kColumns[] =
    "id, sweep_id, created_at, actor, metric, baseline, variant_keys, options, points, result, result_text";

StatusOr<FitRecord> ReadFit(const Statement& row, bool with_result) {
  FitRecord fit;
  fit.id = row.ColumnInt64(0);
  fit.sweep_id = row.ColumnInt64(1);
  fit.created_at = FromUnixMicros(row.ColumnInt64(2));
  fit.actor = row.ColumnText(3);
  fit.metric = row.ColumnText(4);
  fit.baseline = row.ColumnText(5);
  const std::string what = "fit " + std::to_string(fit.id);
  RUNG_ASSIGN_OR_RETURN(nlohmann::json keys,
                        store_internal::ParseJsonColumn(row.ColumnText(6), what + " variant_keys"));
  if (!keys.is_array()) return Status::DataLoss(what + ": variant_keys is not a JSON array");
  for (const nlohmann::json& key : keys) {
    fit.variant_keys.push_back(key.is_string() ? key.get<std::string>() : key.dump());
  }
  RUNG_ASSIGN_OR_RETURN(nlohmann::json options, store_internal::ParseJsonColumn(row.ColumnText(7), what + " options"));
  fit.options = std::move(options);
  RUNG_ASSIGN_OR_RETURN(nlohmann::json points, store_internal::ParseJsonColumn(row.ColumnText(8), what + " points"));
  RUNG_ASSIGN_OR_RETURN(std::vector<FitPointRecord> parsed, PointsFromJson(points, fit.id));
  fit.points = std::move(parsed);
  if (with_result) {
    RUNG_ASSIGN_OR_RETURN(nlohmann::json result, store_internal::ParseJsonColumn(row.ColumnText(9), what + " result"));
    fit.result = std::move(result);
    fit.result_text = row.ColumnText(10);
  }
  return fit;
}

}  // namespace

StatusOr<FitRecord> FitStore::Save(FitRecord fit) {
  return store_.Write([&](Tables& tables) -> StatusOr<FitRecord> {
    Database& db = store_internal::DatabaseOf(tables); const Timestamp now = tables.now();
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, fit.sweep_id).status());
    RUNG_ASSIGN_OR_RETURN(Statement insert, db.Prepare("INSERT INTO sweep_fits(sweep_id, created_at, actor, metric, "
                                                       "baseline, variant_keys, options, points, result, "
                                                       "result_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    insert.BindAll(fit.sweep_id, ToUnixMicros(now), fit.actor, fit.metric, fit.baseline,
                   nlohmann::json(fit.variant_keys).dump(), fit.options.dump(), PointsToJson(fit.points).dump(),
                   fit.result.dump(), fit.result_text);
    RUNG_RETURN_IF_ERROR(insert.Run());
    fit.id = db.LastInsertRowId();
    fit.created_at = now;
    return fit;
  });
}

StatusOr<std::vector<FitRecord>> FitStore::List(int64_t sweep_id, bool with_result) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<FitRecord>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    RUNG_ASSIGN_OR_RETURN(Statement query, db.Prepare(std::string("SELECT ") + kColumns +
                                                      " FROM sweep_fits WHERE sweep_id = ? ORDER BY id DESC"));
    query.Bind(1, sweep_id);
    return store_internal::ReadRows<FitRecord>(
        query, [with_result](const Statement& row) { return ReadFit(row, with_result); });
  });
}

StatusOr<FitRecord> FitStore::Get(int64_t fit_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<FitRecord> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_ASSIGN_OR_RETURN(Statement query,
                          db.Prepare(std::string("SELECT ") + kColumns + " FROM sweep_fits WHERE id = ?"));
    query.Bind(1, fit_id);
    RUNG_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return Status::NotFound("fit " + std::to_string(fit_id) + " does not exist");
    return ReadFit(query, /*with_result=*/true);
  });
}

}  // namespace rung
