#include "core/common/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace rung {
namespace {

// The pid a lock file holds, or "" (its holder has not written it yet, or it is not a number).
std::string HolderPid(int fd) {
  char buffer[32] = {};
  const ssize_t got = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (got <= 0) return "";
  std::string text(buffer, static_cast<size_t>(got));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return "";
  return text;
}

}  // namespace

StatusOr<FolderLock> FolderLock::Acquire(const std::string& folder, const std::string& holder) {
  const std::string path = (std::filesystem::path(folder) / kFolderLockFile).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Internal("cannot create the lock file " + path + ": " + std::strerror(errno));
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    if (error == EWOULDBLOCK) {
      // The holder writes its pid right after locking: give it a moment before saying "unknown".
      std::string pid = HolderPid(fd);
      for (int retry = 0; pid.empty() && retry < 20; ++retry) {
        ::usleep(5000);
        pid = HolderPid(fd);
      }
      ::close(fd);
      return Status::Unavailable("another " + holder + " is writing " + folder + " (pid " +
                                 (pid.empty() ? std::string("unknown") : pid) + ")");
    }
    ::close(fd);
    return Status::Internal("cannot lock " + path + ": " + std::strerror(error));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd);
    return Status::Internal("cannot write " + path + ": " + std::strerror(error));
  }
  return FolderLock(fd);
}

FolderLock::FolderLock(FolderLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FolderLock::~FolderLock() { Release(); }

void FolderLock::Release() {
  if (fd_ < 0) return;
  // Cleared while still held, so no later holder's pid is ever erased; should it fail, the next holder
  // overwrites the stale pid.
  const int cleared = ::ftruncate(fd_, 0);
  static_cast<void>(cleared);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace rung
