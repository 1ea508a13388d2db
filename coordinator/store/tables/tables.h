// coordinator/store/tables/tables.h
//
// The transaction object the managers work through: one Store::Write, Read or Preview hands its
// body a Tables, which gives typed access to every table of the database (sweeps, trials,
// attempts, gangs, workers, events, trial outputs and their paces), the transaction's `now` and the store's
// settings. The managers above the store (coordinator/domain) hold no database and write no SQL:
// they call these typed operations, and every SQL statement lives behind them in this folder.
//
// A Tables is valid only inside the body it was handed to; everything written through it commits
// or rolls back with that body's transaction (store.h).
//
// Example:
//   store.Write([&](Tables& tables) -> Status {
//     RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(sweep_id));
//     return tables.sweeps().SetState(sweep.id, SweepState::kPaused, tables.now());
//   });
//
// Thread safety: none; the Store holds its mutex for the body's whole run.
#pragma once

#include <utility>

#include "coordinator/store/clock.h"
#include "coordinator/store/database.h"
#include "coordinator/store/store_options.h"
#include "coordinator/store/tables/attempt_table.h"
#include "coordinator/store/tables/event_table.h"
#include "coordinator/store/tables/gang_table.h"
#include "coordinator/store/tables/output_table.h"
#include "coordinator/store/tables/pace_table.h"
#include "coordinator/store/tables/sweep_table.h"
#include "coordinator/store/tables/trial_table.h"
#include "coordinator/store/tables/worker_table.h"
#include "core/common/status.h"

namespace rung {

class Tables;

namespace store_internal {
// The connection behind `tables`: for the store's own read models (metric_store.h, overviews.h, ...).
Database& DatabaseOf(Tables& tables);
}  // namespace store_internal

class Tables {
 public:
  Tables(Database& db, const StoreOptions& options, Timestamp now) : db_(db), options_(options), now_(now) {}
  Tables(const Tables&) = delete;
  Tables& operator=(const Tables&) = delete;

  // The transaction's time: one reading of the store's clock per transaction.
  Timestamp now() const { return now_; }
  const StoreOptions& options() const { return options_; }

  SweepTable sweeps() { return SweepTable(db_); }
  TrialTable trials() { return TrialTable(db_); }
  AttemptTable attempts() { return AttemptTable(db_); }
  GangTable gangs() { return GangTable(db_); }
  WorkerTable workers() { return WorkerTable(db_); }
  EventTable events() { return EventTable(db_); }
  OutputTable outputs() { return OutputTable(db_); }
  PaceTable paces() { return PaceTable(db_); }

  // Runs `body()` (returning Status or StatusOr<T>) so that, when it fails, what it wrote is undone
  // and the rest of the transaction goes on: a step that may fail without undoing the steps before
  // it. Returns what the body returned (or the savepoint's own error).
  template <typename Body>
  auto Tentatively(Body&& body) -> decltype(body()) {
    RUNG_RETURN_IF_ERROR(db_.Execute("SAVEPOINT tentative"));
    auto result = body();
    if (!status_internal::StatusOf(result).ok()) {
      db_.Execute("ROLLBACK TO tentative").IgnoreError();  // fails only with the transaction gone
    }
    RUNG_RETURN_IF_ERROR(db_.Execute("RELEASE tentative"));
    return result;
  }

 private:
  friend Database& store_internal::DatabaseOf(Tables& tables);
  Database& db_;
  const StoreOptions& options_;
  const Timestamp now_;
};

namespace store_internal {
inline Database& DatabaseOf(Tables& tables) { return tables.db_; }
}  // namespace store_internal

}  // namespace rung
