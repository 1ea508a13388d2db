#include "coordinator/store/store.h"

#include <exception>

#include "coordinator/store/schema.h"

namespace rung {

namespace {

// FAILED_PRECONDITION naming the damage and the way out, for a file SQLite cannot read or whose
// check fails.
Status Damaged(const std::string& path, const std::string& what) {
  return Status::FailedPrecondition(
      "database " + path + " is damaged (" + what + "); the coordinator will not serve from it. Recover what "
      "it holds into a new file and start on that: sqlite3 " + path + " .recover | sqlite3 " + path +
      ".recovered, or restore a backup (sqlite3 " + path + " \".backup FILE\" while it serves); "
      "--check-at-start none skips this check");
}

Status CheckAtStart(Database& db, const std::string& path, StoreOptions::StartCheck check) {
  if (check == StoreOptions::StartCheck::kNone) return Status::Ok();
  const char* pragma = check == StoreOptions::StartCheck::kFull ? "PRAGMA integrity_check(20)" : "PRAGMA quick_check(20)";
  StatusOr<Statement> statement = db.Prepare(pragma);
  if (!statement.ok()) return Damaged(path, statement.status().message());
  std::string problems;
  while (true) {
    StatusOr<bool> row = statement->Step();
    if (!row.ok()) return Damaged(path, row.status().message());
    if (!*row) break;
    const std::string line = statement->ColumnText(0);
    if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
  }
  if (!problems.empty()) return Damaged(path, std::string(pragma) + ": " + problems);
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, const Clock& clock, StoreOptions options) {
  RUNG_ASSIGN_OR_RETURN(DatabaseLock lock, DatabaseLock::Acquire(path));
  DatabaseOptions database_options;
  database_options.busy_timeout_ms = options.busy_timeout_ms;
  StatusOr<std::unique_ptr<Database>> db = Database::Open(path, database_options);
  if (!db.ok()) {
    return db.status().code() == StatusCode::kDataLoss ? Damaged(path, db.status().message()) : db.status();
  }
  RUNG_RETURN_IF_ERROR(CheckAtStart(**db, path, options.start_check));
  RUNG_RETURN_IF_ERROR(MigrateSchema(**db));
  return std::unique_ptr<Store>(new Store(std::move(lock), std::move(*db), clock, std::move(options)));
}

Status Store::CommitInGroup(const WriteBody& body) {
  PendingWrite mine;
  mine.body = &body;
  std::unique_lock<std::mutex> queue_lock(queue_mutex_);
  queue_.push_back(&mine);
  // Wait while another caller leads a group; return once one of them has done this write.
  queue_changed_.wait(queue_lock, [&] { return mine.done || !leader_active_; });
  if (mine.done) return mine.status;
  leader_active_ = true;
  std::vector<PendingWrite*> group;
  group.swap(queue_);  // this write and every one queued while the last group committed
  queue_lock.unlock();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    RunGroup(group);
  }
  queue_lock.lock();
  for (PendingWrite* write : group) write->done = true;
  leader_active_ = false;
  queue_changed_.notify_all();
  return mine.status;
}

void Store::RunGroup(const std::vector<PendingWrite*>& group) {
  StatusOr<Transaction> transaction = Transaction::Begin(*db_, TransactionMode::kImmediate);
  if (!transaction.ok()) {
    for (PendingWrite* write : group) write->status = transaction.status();
    return;
  }
  const Timestamp now = clock_.Now();
  std::vector<PendingWrite*> written;
  Status broken;  // set when SQLite ended the transaction itself: the rest of the group cannot run
  for (PendingWrite* write : group) {
    if (!broken.ok()) {
      write->status = broken;
      continue;
    }
    Status status = db_->Execute("SAVEPOINT store_write");
    if (status.ok()) {
      try {
        Tables tables(*db_, options_, now);
        status = (*write->body)(tables);
      } catch (const std::exception& error) {  // a bug in a body must not take the other writers down
        status = Status::Internal(std::string("store write: ") + error.what());
      }
      if (status.ok()) status = db_->Execute("RELEASE store_write");
      if (!status.ok() && db_->InTransaction()) {
        // Undoes this body only; when even that fails, the check below finds the transaction gone.
        db_->Execute("ROLLBACK TO store_write").IgnoreError();
        db_->Execute("RELEASE store_write").IgnoreError();
      }
    }
    if (!db_->InTransaction()) {
      broken = Status::Unavailable("sqlite rolled the transaction back (" + status.message() + "); retry");
      if (status.ok()) status = broken;
    }
    write->status = status;
    if (status.ok()) written.push_back(write);
  }
  if (!broken.ok()) {
    for (PendingWrite* write : written) write->status = broken;
    return;
  }
  if (written.empty()) return;  // every body failed: the transaction rolls back on the way out
  const Status committed = transaction->Commit();
  if (!committed.ok()) {
    for (PendingWrite* write : written) write->status = committed;
  }
}

}  // namespace rung
