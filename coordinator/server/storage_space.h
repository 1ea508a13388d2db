// coordinator/server/storage_space.h
//
// The coordinator's view of its disks, said before they fill and while they are full:
//
//   DatabaseSpaceWarning     for ServerInfo.storage_warning (`rung status`, `rung run`): "no space left
//                            on device at DIR (N KiB free): ..." while the database's folder has under
//                            kFullDiskFreeBytes free; "" otherwise.
//   SubmissionSpaceWarnings  for SubmitSweepResponse.warnings: one line for each of the database's
//                            folder and the artifact root (or one for both when they share a file
//                            system) with less free space than the submission's estimated needs
//                            (sweeps/spec/storage_estimate.h). The artifact root is where every
//                            worker writes its checkpoints, so it is measured here as the workers
//                            share it.
//
// A folder that cannot be measured gives no warning: the warning is advice, the write's own error is
// the contract (core/common/write_error.h).
//
// Thread safety: pure functions of the file systems' state.
#pragma once

#include <string>
#include <vector>

#include "sweeps/spec/storage_estimate.h"

namespace rung::server {

std::string DatabaseSpaceWarning(const std::string& database_path);

std::vector<std::string> SubmissionSpaceWarnings(const std::string& database_path, const std::string& artifact_root,
                                                 const StorageNeeds& needs);

}  // namespace rung::server
