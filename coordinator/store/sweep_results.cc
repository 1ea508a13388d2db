#include "coordinator/store/sweep_results.h"

#include "coordinator/store/tables/tables.h"
#include <limits>
#include <set>

#include "coordinator/store/internal/records.h"

namespace rung {
namespace {

double ValueOrNan(const Statement& row, int column) {
  return row.ColumnOptionalDouble(column).value_or(std::numeric_limits<double>::quiet_NaN());
}

}  // namespace

StatusOr<std::vector<TrialResult>> SweepResults::Trials(int64_t sweep_id, int64_t after_index, int64_t limit) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::vector<TrialResult>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    RUNG_ASSIGN_OR_RETURN(
        std::vector<TrialRecord> trials,
        store_internal::Select<TrialRecord>(db, "WHERE sweep_id = ? AND trial_index > ? ORDER BY trial_index LIMIT ?",
                                            sweep_id, after_index, limit));
    RUNG_ASSIGN_OR_RETURN(Statement summaries,
                          db.Prepare("SELECT name, value FROM summaries WHERE trial_id = ? ORDER BY name"));
    RUNG_ASSIGN_OR_RETURN(Statement attempt, db.Prepare("SELECT worker_id, (SELECT provenance FROM attempts p WHERE "
                                                        "p.trial_id = a.trial_id AND p.provenance IS NOT "
                                                        "NULL ORDER BY p.attempt DESC LIMIT 1) FROM attempts a WHERE "
                                                        "a.trial_id = ? ORDER BY a.attempt DESC LIMIT 1"));
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
  return store_.Read([&](Tables& tables) -> StatusOr<std::map<int64_t, std::vector<StepValue>>> {
    Database& db = store_internal::DatabaseOf(tables);
    RUNG_RETURN_IF_ERROR(store_internal::LoadSweep(db, sweep_id).status());
    // As MetricStore::Curve: a lone MAX() takes the other columns from the newest attempt's row.
    RUNG_ASSIGN_OR_RETURN(
        Statement query,
        db.Prepare(
            "SELECT m.trial_id, m.step, m.value, MAX(m.attempt) FROM trials t JOIN metrics m ON m.trial_id = t.id "
            "WHERE t.sweep_id = ? AND m.name = ? GROUP BY m.trial_id, m.step ORDER BY m.trial_id, m.step"));
    query.BindAll(sweep_id, name);
    std::map<int64_t, std::vector<StepValue>> curves;
    while (true) {
      RUNG_ASSIGN_OR_RETURN(bool row, query.Step());
      if (!row) return curves;
      curves[query.ColumnInt64(0)].push_back({query.ColumnInt64(1), ValueOrNan(query, 2)});
    }
  });
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
