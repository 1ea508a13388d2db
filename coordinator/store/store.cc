#include "coordinator/store/store.h"

#include <exception>

#include "coordinator/store/schema.h"

namespace rung {

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, const Clock& clock, StoreOptions options) {
  DatabaseOptions database_options;
  database_options.busy_timeout_ms = options.busy_timeout_ms;
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path, database_options));
  RUNG_RETURN_IF_ERROR(MigrateSchema(*db));
  return std::unique_ptr<Store>(new Store(std::move(db), clock, std::move(options)));
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
