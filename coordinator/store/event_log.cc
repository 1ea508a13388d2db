#include "coordinator/store/event_log.h"

#include "coordinator/store/tables/tables.h"
#include "coordinator/store/internal/records.h"

namespace rung {

StatusOr<std::vector<EventRecord>> EventLog::List(const EventFilter& filter) const {
  return store_.Read([&](Tables& tables) {
    Database& db = store_internal::DatabaseOf(tables);
    // A NULL filter parameter matches everything: one statement serves every combination.
    return store_internal::Select<EventRecord>(
        db,
        "WHERE (?1 IS NULL OR sweep_id = ?1) AND (?2 IS NULL OR trial_id = ?2) AND id > ?3 ORDER BY id LIMIT ?4",
        filter.sweep_id, filter.trial_id, filter.after_id, filter.limit);
  });
}

}  // namespace rung
