// worker/agent/checkpoint_retention.h
//
// What stays on disk of a trial's checkpoints. While a trial runs, rung-train keeps the newest
// `train.keep_checkpoints` of its attempt (core/train/checkpoint.h). Once the trial has SUCCEEDED,
// the worker applies the retention setting (--checkpoints-after-success):
//   final  keep only the newest intact checkpoint of the successful attempt (VerifyCheckpoint: what
//          a run that starts from this trial, train.init.from_trial, reads); remove the rest and
//          the checkpoints of earlier attempts
//   all    keep everything
//   none   remove every checkpoint of the trial (no later run can start from it)
// Only files named as checkpoints (and their checksum files) are removed; the folders and anything
// else in them stay.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung::agent {

enum class RetentionAfterSuccess { kFinal, kAll, kNone };

// "final" | "all" | "none". INVALID_ARGUMENT otherwise.
StatusOr<RetentionAfterSuccess> ParseRetentionAfterSuccess(const std::string& name);

// Applies `mode` to the successful attempt's folder and the trial's earlier attempts' folders.
// Returns how many checkpoint files were removed; a file that cannot be removed is an error
// (INTERNAL, naming it) after the others were tried.
StatusOr<int> ApplyRetentionAfterSuccess(RetentionAfterSuccess mode, const std::string& final_dir,
                                         const std::vector<std::string>& earlier_dirs);

}  // namespace rung::agent
