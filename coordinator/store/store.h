// coordinator/store/store.h
//
// The coordinator's database: one SQLite connection (WAL, synchronous=FULL; database.h) behind one
// mutex, the schema brought up to date on open (schema.h), the clock every write reads its time
// from, and the settings leases and checkpoint folders follow.
//
// Every body a Store runs gets a Tables (tables/tables.h): the transaction object, with typed
// access to each table. The domain managers (coordinator/domain: sweeps, trial lifecycle, gangs,
// workers) hold a Store& and write through Tables only; every SQL statement is in this folder:
//   tables/          the typed tables (sweeps, trials, attempts, gangs, workers, events, outputs)
//   MetricStore      (metric_store.h)     curves, summaries, learned parameters, diagnostics (reads)
//   EventLog         (event_log.h)        who changed what, when and why (reads)
//   Overviews        (overviews.h)        what the user API shows of sweeps and trials (reads)
//   SweepResults     (sweep_results.h)    a sweep's results for fits and exports (reads)
//   FitStore         (fit_store.h)        stored fits
// and two pure bridges: trial_cells.h (a spec's expansion -> a submission) and record_rows.h
// (a trainer's typed records -> metric points, provenance, results).
//
// Example:
//   SystemClock clock;
//   StatusOr<std::unique_ptr<Store>> store = Store::Open("rung.db", clock, {"/shared/artifacts"});
//   if (!store.ok()) return store.status();
//   RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, (*store)->Read([&](Tables& tables) { return tables.sweeps().Get(id); }));
//
// Durability: every write runs in an IMMEDIATE transaction; a call that returns OK has committed
// (and, with synchronous=FULL, reached the disk). A call that fails has changed nothing.
//
// Group commit (docs/design.md "Storage"): writes that arrive while a commit is on its way to the disk wait, then
// share the next transaction, each body in a savepoint of its own, so that N concurrent writers pay
// one fsync instead of N. A body that fails is rolled back to its savepoint and only its caller
// sees the error; if the shared commit fails, every caller of the group gets that error and nothing
// of the group was written. The bodies of one group run one after another, in arrival order, and
// see each other's changes as they would in separate transactions; they share one `now`. A leader
// never waits for writers to join: its group is what queued while the previous group committed.
//
// Thread safety: thread-safe. Write() (the group's bodies), Preview() and Read() hold the store's
// mutex for the whole body, so the managers can be called from any number of threads (the gRPC
// service's). Bodies must not call back into the Store, and must not keep their Tables.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/store/clock.h"
#include "coordinator/store/database.h"
#include "coordinator/store/database_lock.h"
#include "coordinator/store/store_options.h"
#include "coordinator/store/tables/tables.h"
#include "core/common/status.h"

namespace rung {

class Store {
 public:
  // Takes the database's lock (database_lock.h: one Store per database file, however it is named),
  // opens or creates the database at `path`, checks it (StoreOptions::start_check) and migrates it
  // to this build's schema. `clock` must outlive the Store. Errors: database.h's; FAILED_PRECONDITION
  // for a database another process holds, one newer than this build, or one that fails the check
  // (with how to recover it).
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path, const Clock& clock, StoreOptions options = {});

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Runs `body(Tables&)` (tables/tables.h: typed tables, the transaction's `now` read from the
  // clock once) in an IMMEDIATE transaction (shared with concurrent writes: group commit, above)
  // under the mutex. `body` returns Status or StatusOr<T>; Write returns the same: the body's value
  // once the commit succeeded, or the first error (and then nothing the body did was written).
  template <typename Body>
  auto Write(Body&& body) -> decltype(body(std::declval<Tables&>())) {
    using Result = decltype(body(std::declval<Tables&>()));
    std::optional<Result> result;
    const Status committed = CommitInGroup([&](Tables& tables) -> Status {
      result.emplace(body(tables));
      return status_internal::StatusOf(*result);
    });
    if (result && !result->ok()) return std::move(*result);
    if (!committed.ok() || !result) return committed.ok() ? Status::Internal("store: write body did not run") : committed;
    return std::move(*result);
  }

  // Runs `body(Tables&)` like Write, then rolls the transaction back whatever the body returned:
  // what a write would do, without doing it (dry runs).
  template <typename Body>
  auto Preview(Body&& body) -> decltype(body(std::declval<Tables&>())) {
    std::lock_guard<std::mutex> lock(mutex_);
    RUNG_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(*db_, TransactionMode::kImmediate));
    Tables tables(*db_, options_, clock_.Now());
    return body(tables);  // the transaction rolls back on the way out
  }

  // Runs `body(Tables&)` under the mutex and returns what it returns. No write of this process can
  // interleave, so several SELECTs see one state without a transaction. The body must not write.
  template <typename Body>
  auto Read(Body&& body) -> decltype(body(std::declval<Tables&>())) {
    std::lock_guard<std::mutex> lock(mutex_);
    Tables tables(*db_, options_, clock_.Now());
    return body(tables);
  }

  const StoreOptions& options() const { return options_; }
  const Clock& clock() const { return clock_; }
  // The database file as opened (fixed for the store's life).
  const std::string& database_path() const { return db_->path(); }

 private:
  using WriteBody = std::function<Status(Tables&)>;
  // One caller's write waiting for, or done in, a group.
  struct PendingWrite {
    const WriteBody* body = nullptr;
    Status status;      // the body's error, else the group's commit status
    bool done = false;  // guarded by queue_mutex_
  };

  Store(DatabaseLock lock, std::unique_ptr<Database> db, const Clock& clock, StoreOptions options)
      : lock_(std::move(lock)), db_(std::move(db)), clock_(clock), options_(std::move(options)) {}

  // Queues `body`; the first waiting caller leads: it takes every queued write, runs them in one
  // transaction (RunGroup) and wakes their callers. Returns this body's status (see above).
  Status CommitInGroup(const WriteBody& body);
  // REQUIRES: mutex_ held. One transaction, a savepoint per write, one commit.
  void RunGroup(const std::vector<PendingWrite*>& group);

  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;  // a group ended
  std::vector<PendingWrite*> queue_;       // guarded by queue_mutex_
  bool leader_active_ = false;             // guarded by queue_mutex_

  std::mutex mutex_;
  DatabaseLock lock_;             // declared before db_: released after the connection closed
  std::unique_ptr<Database> db_;  // guarded by mutex_
  const Clock& clock_;
  const StoreOptions options_;
};

}  // namespace rung
