// coordinator/cli/full_disk_report.h
//
// Where a sweep is held up by a full disk, each in the words every part of rung uses for it ("no space
// left on device at PATH", core/common/write_error.h), for `rung status` and `rung run`:
//
//   the coordinator's database     ServerInfo.storage_warning (its folder has under 1 MiB free)
//   a pause of `rung run`          the sweep's state reason, when a `rung run` paused it for a full disk
//   a worker's disk                trials requeued (PREEMPTED) after an attempt that ended, at
//                                  `since_seconds` or later on the coordinator's clock, because its
//                                  worker's disk was full; at most kFullDiskProbes trials are asked
//
// Thread safety: as the connection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/cli/command_support.h"

namespace rung::cli {

inline constexpr int kFullDiskProbes = 8;

// Marks the state reason of a pause `rung run` made for a full disk: the next `rung run` of the
// sweep resumes it (a pause of the user's own stays).
inline constexpr char kFullDiskPauseMark[] = " [paused by rung run for a full disk]";

// "trial N attempt K (ended TIME): <its reason>" for the first trial of `trials` whose last attempt ended for a
// full disk at `since_seconds` or later; "" when none did.
std::string WorkerFullDiskReport(CoordinatorConnection& connection, const std::vector<rung::v1::Trial>& trials,
                                 int64_t since_seconds);

// Every report of the three kinds above, empty when the disks are fine.
std::vector<std::string> FullDiskReports(CoordinatorConnection& connection, const std::string& storage_warning,
                                         const rung::v1::Sweep& sweep, const std::vector<rung::v1::Trial>& trials,
                                         int64_t since_seconds);

}  // namespace rung::cli
