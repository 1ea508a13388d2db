#include "core/common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/common/write_error.h"

namespace rung {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxLinks = 40;  // as the kernel's MAXSYMLINKS

std::string Octal(mode_t mode) {
  char text[16];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The error of a target that cannot be opened or created: what the caller may not do there
// (permissions, a missing or non-folder parent) is INVALID_ARGUMENT, anything else as WriteError.
Status OpenError(const std::string& path, int error) {
  switch (error) {
    case EACCES:
    case EPERM:
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case ENAMETOOLONG:
    case EROFS:
    case ENXIO:
      return Status::InvalidArgument("cannot write " + path + ": " + std::strerror(error));
    default:
      return WriteError("writing", path, error);
  }
}

struct Resolved {
  std::string target;       // the end of the chain of links (may not exist)
  bool through_proc = false;  // a step of the chain lies under /proc (the process's open files)
};

// Whether `path`'s folder is (through links such as /dev/fd) a folder of /proc.
bool UnderProc(const std::string& path) {
  if (path.rfind("/proc/", 0) == 0) return true;
  const fs::path parent = fs::path(path).parent_path();
  char real[PATH_MAX];
  if (::realpath(parent.empty() ? "." : parent.c_str(), real) == nullptr) return false;
  return std::string_view(real).substr(0, 6) == "/proc/";
}

// Follows the symbolic links of `path` itself (not of its folders) to the end of the chain.
StatusOr<Resolved> ResolveLinks(const std::string& path) {
  Resolved resolved;
  std::string current = path;
  for (int hops = 0; hops <= kMaxLinks; ++hops) {
    if (UnderProc(current)) resolved.through_proc = true;
    struct stat info {};
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) {
      resolved.target = current;
      return resolved;
    }
    char buffer[PATH_MAX];
    const ssize_t length = ::readlink(current.c_str(), buffer, sizeof(buffer));
    if (length < 0) return OpenError(path, errno);
    const fs::path link(std::string(buffer, static_cast<size_t>(length)));
    current = link.is_absolute() ? link.string() : (fs::path(current).parent_path() / link).string();
  }
  return OpenError(path, ELOOP);
}

// A temporary file name unique in this process (pid and a counter) beside `target`.
std::string TemporaryName(const std::string& target) {
  static std::atomic<unsigned> counter{0};
  const fs::path path(target);
  return (path.parent_path() / ("." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                                std::to_string(counter.fetch_add(1))))
      .string();
}

}  // namespace

StatusOr<OutputFile> OutputFile::Open(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("no output file named");
  RUNG_ASSIGN_OR_RETURN(const Resolved resolved, ResolveLinks(path));
  const std::string named = resolved.target == path ? path : path + " (a link to " + resolved.target + ")";
  OutputFile file;
  file.path_ = path;
  // Through /proc the chain ends in names such as "pipe:[123]": the kernel resolves those, so
  // `path` itself is what is looked at and opened.
  const std::string& looked_at = resolved.through_proc ? path : resolved.target;
  struct stat info {};
  const bool exists = ::stat(looked_at.c_str(), &info) == 0;
  if (!exists && (errno != ENOENT || resolved.through_proc)) return OpenError(named, errno);
  if (exists && S_ISDIR(info.st_mode)) {
    return Status::InvalidArgument("cannot write " + named + ": it is a folder, not a file");
  }
  if (exists && S_ISSOCK(info.st_mode)) {
    return Status::InvalidArgument("cannot write " + named + ": it is a socket, not a file");
  }
  const bool device = exists && (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) || S_ISFIFO(info.st_mode));
  if (exists && !device && !S_ISREG(info.st_mode)) {
    return Status::InvalidArgument("cannot write " + named + ": it is not a regular file, device or FIFO");
  }
  if (device || resolved.through_proc) {
    // In place. A regular file reached through /proc (stdout redirected to a file) is appended to,
    // as the open file it names would be: its earlier content is not rung's to truncate.
    const int flags = O_WRONLY | O_CLOEXEC | (S_ISREG(info.st_mode) ? O_APPEND : 0);
    int fd;
    do {
      fd = ::open(looked_at.c_str(), flags);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return OpenError(named, errno);
    file.fd_ = fd;
    file.block_device_ = S_ISBLK(info.st_mode);
    return file;
  }
  if (exists) {
    // rename() needs only the folder's permission: the file's own is checked here. access()
    // lets root write anything, so for root a file without any write bit counts as read-only.
    const bool writable = ::geteuid() == 0 ? (info.st_mode & 0222) != 0
                                           : ::faccessat(AT_FDCWD, looked_at.c_str(), W_OK, AT_EACCESS) == 0;
    if (!writable) {
      return Status::InvalidArgument("cannot write " + named + ": the file is read-only (mode " +
                                     Octal(info.st_mode) + "); rung does not replace it");
    }
  }
  // A new file gets 0666 less the umask from open() itself; a replaced one keeps its mode.
  for (int attempt = 0; attempt < 100 && file.fd_ < 0; ++attempt) {
    file.temporary_ = TemporaryName(resolved.target);
    file.fd_ = ::open(file.temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (file.fd_ < 0 && errno != EEXIST && errno != EINTR) {
      const int error = errno;
      file.temporary_.clear();
      return OpenError(named, error);
    }
  }
  if (file.fd_ < 0) {
    file.temporary_.clear();
    return Status::Internal("cannot create a temporary file beside " + named);
  }
  if (exists && ::fchmod(file.fd_, info.st_mode & 07777) != 0) {
    const Status status = Status::Internal("cannot set the mode of " + file.temporary_ + ": " + std::strerror(errno));
    file.Abandon();
    return status;
  }
  file.target_ = resolved.target;
  return file;
}

OutputFile::OutputFile(OutputFile&& other) noexcept { *this = std::move(other); }

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this != &other) {
    Abandon();
    path_ = std::move(other.path_);
    target_ = std::move(other.target_);
    temporary_ = std::move(other.temporary_);
    fd_ = other.fd_;
    block_device_ = other.block_device_;
    error_ = std::move(other.error_);
    other.temporary_.clear();
    other.fd_ = -1;
  }
  return *this;
}

OutputFile::~OutputFile() { Abandon(); }

void OutputFile::Abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
}

Status OutputFile::Write(std::string_view data) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status::FailedPrecondition("write to " + path_ + " after it was committed");
  const char* next = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t written = ::write(fd_, next, left);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      error_ = WriteError("writing", path_, written < 0 ? errno : EIO);
      Abandon();
      return error_;
    }
    next += written;
    left -= static_cast<size_t>(written);
  }
  return Status::Ok();
}

Status OutputFile::Commit() {
  if (!error_.ok()) return error_;
  if (fd_ < 0) return Status::FailedPrecondition(path_ + " was committed already");
  const bool replace = !temporary_.empty();
  if ((replace || block_device_) && ::fsync(fd_) != 0) {
    error_ = WriteError("writing", path_, errno);
    Abandon();
    return error_;
  }
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) {
    error_ = WriteError("writing", path_, errno);
    Abandon();
    return error_;
  }
  if (replace) {
    if (std::rename(temporary_.c_str(), target_.c_str()) != 0) {
      error_ = WriteError("writing", path_, errno);
      Abandon();
      return error_;
    }
    temporary_.clear();
  }
  return Status::Ok();
}

Status WriteFileAtomically(const std::string& path, std::initializer_list<std::string_view> pieces) {
  RUNG_ASSIGN_OR_RETURN(OutputFile file, OutputFile::Open(path));
  for (std::string_view piece : pieces) RUNG_RETURN_IF_ERROR(file.Write(piece));
  return file.Commit();
}

}  // namespace rung
