// core/common/free_space.h
//
// The free bytes (and the identity) of the file system a path is on (what an unprivileged writer may still use), probed
// at the path's nearest existing ancestor, so a folder not made yet is measured where it will be.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.h"

namespace rung {

// Below this many free bytes a folder counts as full: a checkpoint or a database page may no longer
// fit. What `rung run` stops at and what the coordinator reports in its storage warning.
inline constexpr uint64_t kFullDiskFreeBytes = uint64_t{1} << 20;

struct DiskSpace {
  uint64_t free_bytes = 0;      // what an unprivileged writer may still use
  uint64_t file_system_id = 0;  // equal for two paths on one file system (the device, st_dev)
};

// Errors: INTERNAL when no ancestor of `path` can be probed.
StatusOr<DiskSpace> DiskSpaceAt(const std::string& path);
StatusOr<uint64_t> FreeBytesAt(const std::string& path);

// A size for people: "812 B", "96.0 KiB", "1.5 MiB", "2.3 GiB".
std::string HumanBytes(uint64_t bytes);

}  // namespace rung
