// coordinator/store/tables/event_table.cc
#include "coordinator/store/tables/event_table.h"

#include "coordinator/store/database.h"

namespace rung {

Status EventTable::Append(const EventRecord& event) {
  return db_.Run(
      "INSERT INTO events(at, sweep_id, trial_id, attempt, kind, from_state, to_state, actor, reason) VALUES (?, "
      "?, ?, ?, ?, NULLIF(?, ''), NULLIF(?, ''), ?, ?)",
      ToUnixMicros(event.at), event.sweep_id, event.trial_id, event.attempt, event.kind, event.from_state,
      event.to_state, event.actor, event.reason);
}

StatusOr<std::optional<std::string>> EventTable::LatestStateReason(int64_t trial_id) {
  RUNG_ASSIGN_OR_RETURN(Statement latest,
                        db_.Prepare("SELECT reason FROM events WHERE trial_id = ? AND kind IN ('trial_state', "
                                    "'trial_waiting') ORDER BY id DESC LIMIT 1"));
  latest.Bind(1, trial_id);
  RUNG_ASSIGN_OR_RETURN(bool row, latest.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(latest.ColumnText(0));
}

StatusOr<std::vector<std::string>> EventTable::SweepReasons(int64_t sweep_id, const std::string& kind) {
  RUNG_ASSIGN_OR_RETURN(Statement query,
                        db_.Prepare("SELECT reason FROM events WHERE sweep_id = ? AND kind = ? ORDER BY id"));
  query.BindAll(sweep_id, kind);
  std::vector<std::string> reasons;
  while (true) {
    RUNG_ASSIGN_OR_RETURN(bool row, query.Step());
    if (!row) return reasons;
    reasons.push_back(query.ColumnText(0));
  }
}

}  // namespace rung
