#include "core/common/free_space.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>

namespace rung {

StatusOr<DiskSpace> DiskSpaceAt(const std::string& path) {
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
  struct stat file {};
  if (::stat(probe.c_str(), &file) != 0) return Status::Internal("stat " + probe.string() + ": " + std::strerror(errno));
  return DiskSpace{static_cast<uint64_t>(stats.f_bavail) * static_cast<uint64_t>(stats.f_frsize),
                   static_cast<uint64_t>(file.st_dev)};
}

StatusOr<uint64_t> FreeBytesAt(const std::string& path) {
  RUNG_ASSIGN_OR_RETURN(const DiskSpace space, DiskSpaceAt(path));
  return space.free_bytes;
}

std::string HumanBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace rung
