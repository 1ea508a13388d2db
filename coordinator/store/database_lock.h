// coordinator/store/database_lock.h
//
// The database is one coordinator's alone. DatabaseLock takes an exclusive flock(2) on the database
// file itself, so that every path to it (the file, a symbolic link, a hard link) meets the same
// lock; flock locks are independent of the fcntl(2) locks SQLite takes on the same file, and the
// descriptor stays open for the lock's life (closing any descriptor of the file would drop SQLite's
// fcntl locks). Beside the file's real path it writes a record of the holder, named by the file's
// device and inode: `.rung-holder-<dev>-<ino>.json` = {"pid", "host", "started_at", "path"}; a
// second coordinator is refused with the holder's pid, host and start time.
//
// A record left by a coordinator that was killed is stale but harmless: the lock died with the
// process, and the next holder writes its own record. The holder of the lock must destroy the
// database connection before the lock (closing the lock's descriptor while SQLite holds the file
// would drop SQLite's locks), and one process should not try to lock a file it already holds: the
// refused attempt closes its descriptor of the file, with the same effect.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(DatabaseLock lock, DatabaseLock::Acquire("rung.db"));  // held until destroyed
//
// Thread safety: none needed; one owner (the Store).
#pragma once

#include <string>
#include <utility>

#include "core/common/status.h"

namespace rung {

class DatabaseLock {
 public:
  // Creates the file when it does not exist (an empty file is a new SQLite database). Errors:
  // FAILED_PRECONDITION when another process holds the lock (naming it, from its record), and
  // UNAVAILABLE when the file cannot be opened or locked.
  static StatusOr<DatabaseLock> Acquire(const std::string& path);

  DatabaseLock(DatabaseLock&& other) noexcept;
  DatabaseLock& operator=(DatabaseLock&& other) noexcept;
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;
  ~DatabaseLock();  // removes the record, then releases the lock

  const std::string& holder_record_path() const { return record_path_; }

 private:
  DatabaseLock(int fd, std::string record_path) : fd_(fd), record_path_(std::move(record_path)) {}
  void Release();

  int fd_ = -1;
  std::string record_path_;
};

}  // namespace rung
