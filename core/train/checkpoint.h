// core/train/checkpoint.h
//
// Checkpoint files of a training run and their directory: written atomically (temp file in the same
// directory, fsync, rename, fsync of the directory), named ckpt-<step>.pt so the newest sorts last,
// and pruned to the newest `keep`. A reader never sees a half-written checkpoint.
// Torch-free header (rung-worker and the stand-in trainer use it): what the archive holds is
// core/train/checkpoint_io.h, which writes it through the callback.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace rung {

// Path of the checkpoint for `step` in `dir`.
std::string CheckpointPath(const std::string& dir, int64_t step);

// Checkpoints in `dir`, oldest first (empty when the directory does not exist).
std::vector<std::string> ListCheckpoints(const std::string& dir);

// Creates `dir` (and parents), calls write(temp_path) to fill a temporary file, then publishes it
// as CheckpointPath(dir, step) atomically and keeps only the newest `keep` checkpoints.
Status WriteCheckpointAtomically(const std::string& dir, int64_t step, int64_t keep,
                                 const std::function<Status(const std::string& temp_path)>& write);

// The first dotted key path where a checkpoint's stored identity and the run's differ ("(root)" for
// documents of different types at the top), or "" when they are equal: what a resume that is
// refused for another config names.
std::string FirstIdentityDifference(const nlohmann::json& stored, const nlohmann::json& expected);

}  // namespace rung
