#include "core/common/free_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace rung {

StatusOr<uint64_t> FreeBytesAt(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::path probe = fs::absolute(path, error);
  if (error) probe = path;
  while (!fs::exists(probe, error) && probe.has_parent_path() && probe != probe.parent_path()) {
    probe = probe.parent_path();
  }
  struct statvfs stats {};
  if (::statvfs(probe.c_str(), &stats) != 0) {
    return Status::Internal("statvfs " + probe.string() + ": " + std::strerror(errno));
  }
  return static_cast<uint64_t>(stats.f_bavail) * static_cast<uint64_t>(stats.f_frsize);
}

}  // namespace rung
