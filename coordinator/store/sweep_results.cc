#include "coordinator/store/sweep_results.h"

#include "coordinator/store/tables/tables.h"
#include <set>

#include "coordinator/store/internal/records.h"
#include "coordinator/store/metric_store.h"

namespace rung {

using store_internal::ValueOrNan;

StatusOr<std::vector<TrialResult>> SweepResults::Trials(int64_t sweep_id, int64_t after_index, int64_t limit,
                                                        ProvenanceRead provenance_read) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<TrialResult>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    RUNG_ASSIGN_OR_RETURN(
        std::vector<TrialRecord> trials,
        store_internal::Select<TrialRecord>(db, "WHERE sweep_id = ? AND trial_index > ? ORDER BY trial_index LIMIT ?",
                                            sweep_id, after_index, limit));
    RUNG_ASSIGN_OR_RETURN(Statement summaries,
                          db.Prepare("SELECT name, value FROM summaries WHERE trial_id = ? ORDER BY name"));
    const std::string provenance_column = provenance_read == ProvenanceRead::kSkip
                                              ? "NULL"
                                              : "(SELECT provenance FROM attempts p WHERE p.trial_id = a.trial_id AND "
                                                "p.provenance IS NOT NULL ORDER BY p.attempt DESC LIMIT 1)";
    RUNG_ASSIGN_OR_RETURN(Statement attempt,
                          db.Prepare("SELECT worker_id, " + provenance_column +
                                     " FROM attempts a WHERE a.trial_id = ? ORDER BY a.attempt DESC LIMIT 1"));
    std::vector<TrialResult> results;
    results.reserve(trials.size());
    for (TrialRecord& trial : trials) {
      TrialResult result;
      summaries.Reset();
      summaries.Bind(1, trial.id);
      while (true) {
        RUNG_ASSIGN_OR_RETURN(bool row, summaries.Step());
        if (!row) break;
        result.summaries[summaries.ColumnText(0)] = ValueOrNan(summaries, 1);
      }
      attempt.Reset();
      attempt.Bind(1, trial.id);
      RUNG_ASSIGN_OR_RETURN(bool row, attempt.Step());
      if (row) {
        result.worker_id = attempt.ColumnText(0);
        if (!attempt.ColumnIsNull(1)) {
          RUNG_ASSIGN_OR_RETURN(nlohmann::json provenance,
                                store_internal::ParseJsonColumn(attempt.ColumnText(1),
                                                                "provenance of trial " + std::to_string(trial.id)));
          result.provenance = std::move(provenance);
        }
      }
      result.trial = std::move(trial);
      results.push_back(std::move(result));
    }
    return results;
  });
}

StatusOr<std::map<int64_t, std::vector<StepValue>>> SweepResults::Curves(int64_t sweep_id,
                                                                         const std::string& name) const {
  // The same read as the dashboard's curves (MetricStore::ForEachSweepCurve: key order, no sort, the
  // newest attempt's point of each step).
  std::map<int64_t, std::vector<StepValue>> curves;
  RUNG_RETURN_IF_ERROR(MetricStore(store_).ForEachSweepCurve(sweep_id, {name}, {}, [&](TrialCurve&& curve) {
    std::vector<StepValue>& values = curves[curve.trial_id];
    values.reserve(curve.points.size());
    for (const CurvePoint& point : curve.points) values.push_back({point.point.step, point.point.value});
    return Status::Ok();
  }));
  return curves;
}

StatusOr<std::vector<std::string>> SweepResults::MetricNames(int64_t sweep_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<std::string>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    RUNG_ASSIGN_OR_RETURN(
        Statement query,
        db.Prepare(
            "SELECT DISTINCT s.name FROM trials t JOIN summaries s ON s.trial_id = t.id WHERE t.sweep_id = ?1 "
            "UNION SELECT DISTINCT m.name FROM trials t JOIN metrics m ON m.trial_id = t.id WHERE t.sweep_id = ?1 "
            "ORDER BY 1"));
    query.Bind(1, sweep_id);
    return store_internal::ReadRows<std::string>(query, [](const Statement& row) { return row.ColumnText(0); });
  });
}

}  // namespace rung
