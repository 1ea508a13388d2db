// tests/support/small_disk/small_disk.h
//
// A small disk for tests of what rung does when one fills: `script` runs under `sh -c` in a private
// mount namespace (`unshare -m`) with a tmpfs of `size` (e.g. "300k", "3m") mounted at `disk` (created
// here if missing); the script sees the disk as $RUNG_DISK and `args` as $1, $2, ... Its stdout and
// stderr come back separately. Nothing outside the namespace sees the mount.
//
// Where the machine refuses a mount namespace or a tmpfs (no CAP_SYS_ADMIN, a sandbox), the result
// says so (`refused`, with unshare's words): tests then GTEST_SKIP with "skipped: cannot create a
// mount namespace", never pass silently.
//
// Example:
//   StatusOr<SmallDiskRun> run = RunOnSmallDisk(dir, "3m", "\"$1\" --help > $RUNG_DISK/out", {binary});
//   if (run->refused) GTEST_SKIP() << kSmallDiskRefused << run->refusal;
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace rung::testing {

inline constexpr char kSmallDiskRefused[] = "skipped: cannot create a mount namespace (unshare -m and a tmpfs): ";

struct SmallDiskRun {
  bool refused = false;
  std::string refusal;  // unshare's or mount's stderr when refused
  SubprocessResult result;
};

// Errors: the subprocess's (unshare not installed, the timeout passed).
StatusOr<SmallDiskRun> RunOnSmallDisk(const std::string& disk, const std::string& size, const std::string& script,
                                      const std::vector<std::string>& args, std::chrono::seconds timeout);

}  // namespace rung::testing
