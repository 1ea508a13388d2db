// coordinator/store/store.h
//
// The coordinator's database: one SQLite connection (WAL, synchronous=FULL; database.h) behind one
// mutex, the schema brought up to date on open (schema.h), the clock every write reads its time
// from, and the settings leases and checkpoint folders follow.
//
// The managers are the API; each holds a Store& and owns one concern, Ray GCS style:
//   SweepManager    (sweep_manager.h)    submit and resubmit specs; pause, resume, cancel, retry; tags
//   TrialLifecycle  (trial_lifecycle.h)  leases, worker reports with attempt fencing, lease expiry,
//                                        restart reconciliation, trial queries
//   MetricStore     (metric_store.h)     metric batches, curves, summaries, learned parameters,
//                                        diagnostics
//   WorkerRegistry  (worker_registry.h)  workers and their resources
//   EventLog        (event_log.h)        who changed what, when and why
//   Overviews       (overviews.h)        what the user API shows of sweeps and trials (reads)
// and two pure bridges: trial_cells.h (a spec's expansion -> a submission) and record_rows.h
// (a trainer's typed records -> metric points, provenance, results).
//
// Example:
//   SystemClock clock;
//   StatusOr<std::unique_ptr<Store>> store = Store::Open("rung.db", clock, {"/shared/artifacts"});
//   if (!store.ok()) return store.status();
//   TrialLifecycle trials(**store);
//   RUNG_RETURN_IF_ERROR(trials.RestartReconcile().status());  // once, after every start
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
// service's). Bodies must not call back into the Store.
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
#include "core/common/status.h"

namespace rung {

struct StoreOptions {
  // Where checkpoints go: <artifact_root>/<sweep name>/<trial_index>/attempt-<n>. Shared by all
  // workers; the store only names the folders.
  std::string artifact_root = "artifacts";
  // How long a lease lasts without a heartbeat (and after RestartReconcile).
  std::chrono::microseconds lease_duration = std::chrono::seconds(60);
  int busy_timeout_ms = 5000;
  // Gangs (gang_leases.h): a forming gang whose ranks are not all reserved this long after its first
  // reservation is released; a reserving worker that has not polled for this long drops out.
  std::chrono::microseconds gang_formation_timeout = std::chrono::seconds(60);
  // Rendezvous ports of gang attempts: first_port + (a hash of trial and attempt) % port_count, on
  // rank 0's worker host.
  int rendezvous_first_port = 29500;
  int rendezvous_port_count = 500;
};

class Store {
 public:
  // Opens or creates the database at `path` and migrates it to this build's schema. `clock` must
  // outlive the Store. Errors: database.h's, and FAILED_PRECONDITION for a database newer than this build.
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path, const Clock& clock, StoreOptions options = {});

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Runs `body(Database&, Timestamp now)` in an IMMEDIATE transaction (shared with concurrent
  // writes: group commit, above) under the mutex, `now` read from the clock once per transaction.
  // `body` returns Status or StatusOr<T>; Write returns the same: the body's value once the commit
  // succeeded, or the first error (and then nothing the body did was written).
  template <typename Body>
  auto Write(Body&& body) -> decltype(body(std::declval<Database&>(), std::declval<Timestamp>())) {
    using Result = decltype(body(std::declval<Database&>(), std::declval<Timestamp>()));
    std::optional<Result> result;
    const Status committed = CommitInGroup([&](Database& db, Timestamp now) -> Status {
      result.emplace(body(db, now));
      return StatusOf(*result);
    });
    if (result && !result->ok()) return std::move(*result);
    if (!committed.ok() || !result) return committed.ok() ? Status::Internal("store: write body did not run") : committed;
    return std::move(*result);
  }

  // Runs `body(Database&, Timestamp now)` like Write, then rolls the transaction back whatever the
  // body returned: what a write would do, without doing it (dry runs).
  template <typename Body>
  auto Preview(Body&& body) -> decltype(body(std::declval<Database&>(), std::declval<Timestamp>())) {
    std::lock_guard<std::mutex> lock(mutex_);
    StatusOr<Transaction> transaction = Transaction::Begin(*db_, TransactionMode::kImmediate);
    if (!transaction.ok()) return transaction.status();
    return body(*db_, clock_.Now());  // the transaction rolls back on the way out
  }

  // Runs `body(Database&)` under the mutex and returns what it returns. No write of this process can
  // interleave, so several SELECTs see one state without a transaction.
  template <typename Body>
  auto Read(Body&& body) -> decltype(body(std::declval<Database&>())) {
    std::lock_guard<std::mutex> lock(mutex_);
    return body(*db_);
  }

  const StoreOptions& options() const { return options_; }
  const Clock& clock() const { return clock_; }

 private:
  using WriteBody = std::function<Status(Database&, Timestamp)>;
  // One caller's write waiting for, or done in, a group.
  struct PendingWrite {
    const WriteBody* body = nullptr;
    Status status;      // the body's error, else the group's commit status
    bool done = false;  // guarded by queue_mutex_
  };

  Store(std::unique_ptr<Database> db, const Clock& clock, StoreOptions options)
      : db_(std::move(db)), clock_(clock), options_(std::move(options)) {}

  static const Status& StatusOf(const Status& status) { return status; }
  template <typename T>
  static const Status& StatusOf(const StatusOr<T>& result) {
    return result.status();
  }

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
  std::unique_ptr<Database> db_;  // guarded by mutex_
  const Clock& clock_;
  const StoreOptions options_;
};

}  // namespace rung
