// core/common/folder_lock.h
//
// FolderLock: one process's exclusive hold on a folder it writes, so that a second writer of the same
// folder is refused instead of interleaving its files with the first's. The lock is an advisory flock(2)
// on FOLDER/.rung-lock (a hidden name: readers of the folder's files pass it by), which holds the
// holder's pid for the refusal to name. The kernel releases it when the holder exits, however it exits,
// so a killed writer never leaves the folder locked; the file itself stays (removing it would let two
// writers lock two different files).
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(FolderLock lock, FolderLock::Acquire(out, "rung-data prepare"));
//   ... write into out; the lock is released when `lock` goes out of scope ...
//
// Thread safety: a value owned by one thread. The lock belongs to the open file: two FolderLocks of one
// folder in one process exclude each other too.
#pragma once

#include <string>

#include "core/common/status.h"

namespace rung {

inline constexpr char kFolderLockFile[] = ".rung-lock";

class FolderLock {
 public:
  // Locks `folder` (which must exist). `holder` names what writes the folder (e.g. "rung-data prepare"),
  // here and in the refusal. Errors: UNAVAILABLE "another HOLDER is writing FOLDER (pid N)" while another
  // process (or FolderLock) holds it, N "unknown" if it has not written its pid yet; INTERNAL when the
  // lock file cannot be created or locked.
  static StatusOr<FolderLock> Acquire(const std::string& folder, const std::string& holder);

  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();

 private:
  explicit FolderLock(int fd) : fd_(fd) {}
  void Release();

  int fd_ = -1;
};

}  // namespace rung
