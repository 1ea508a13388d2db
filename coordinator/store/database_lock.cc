// coordinator/store/database_lock.cc
#include "coordinator/store/database_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

namespace rung {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

std::string NowIso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The holder record's path: beside the file's real path, named by its device and inode.
std::string RecordPath(const std::string& path, const struct stat& file) {
  std::error_code error;
  std::filesystem::path real = std::filesystem::canonical(path, error);
  if (error) real = std::filesystem::absolute(path);
  return (real.parent_path() / (".rung-holder-" + std::to_string(file.st_dev) + "-" + std::to_string(file.st_ino) +
                                ".json"))
      .string();
}

// "pid 4242 on node7 since 2026-12-01T15:00:00Z (holder record F)", or what is known without one.
std::string DescribeHolder(const std::string& record_path) {
  std::ifstream stream(record_path);
  if (!stream) return "another process (no holder record at " + record_path + ")";
  std::stringstream text;
  text << stream.rdbuf();
  const nlohmann::json record = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!record.is_object()) return "another process (unreadable holder record " + record_path + ")";
  return "rung-coordinator pid " + std::to_string(record.value("pid", int64_t{0})) + " on " +
         record.value("host", std::string("?")) + " since " + record.value("started_at", std::string("?")) +
         " (opened as " + record.value("path", std::string("?")) + "; holder record " + record_path + ")";
}

// Writes the record through a temporary file and a rename, so a reader never sees half of it.
void WriteRecord(const std::string& record_path, const std::string& path) {
  const nlohmann::json record = {
      {"pid", static_cast<int64_t>(getpid())}, {"host", HostName()}, {"started_at", NowIso8601()}, {"path", path}};
  const std::string temporary = record_path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << record.dump() << "\n";
    if (!out) return;  // the record only explains a refusal; the lock holds without it
  }
  std::error_code ignored;
  std::filesystem::rename(temporary, record_path, ignored);
}

}  // namespace

StatusOr<DatabaseLock> DatabaseLock::Acquire(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable("cannot open database " + path + ": " + std::strerror(errno));
  struct stat file {};
  if (::fstat(fd, &file) != 0) {
    const std::string error = std::strerror(errno);
    ::close(fd);
    return Status::Unavailable("cannot stat database " + path + ": " + error);
  }
  const std::string record_path = RecordPath(path, file);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return Status::FailedPrecondition("database " + path + " is in use by " + DescribeHolder(record_path) +
                                        ": one coordinator per database; stop that one first, or start this "
                                        "one on another --db");
    }
    return Status::Unavailable("cannot lock database " + path + ": " + std::strerror(error));
  }
  WriteRecord(record_path, path);
  return DatabaseLock(fd, record_path);
}

DatabaseLock::DatabaseLock(DatabaseLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), record_path_(std::move(other.record_path_)) {}

DatabaseLock& DatabaseLock::operator=(DatabaseLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    record_path_ = std::move(other.record_path_);
  }
  return *this;
}

DatabaseLock::~DatabaseLock() { Release(); }

void DatabaseLock::Release() {
  if (fd_ < 0) return;
  std::error_code ignored;
  std::filesystem::remove(record_path_, ignored);
  ::close(fd_);  // releases the flock
  fd_ = -1;
}

}  // namespace rung
