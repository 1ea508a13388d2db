// core/train/checkpoint.h
//
// Checkpoint files of a training run and their directory: written atomically (temp file in the same
// directory, fsync, rename, fsync of the directory), named ckpt-<step>.pt so the newest sorts last,
// and pruned to the newest `keep`. A reader never sees a half-written checkpoint. Each carries a
// checksum file, ckpt-<step>.pt.sha256 (the SHA-256 of its bytes as written, published before the
// checkpoint itself), so that a checkpoint damaged later (a truncated copy, a bad disk) is known
// for what it is before anything is loaded from it.
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

// The checksum file of a checkpoint.
std::string ChecksumPath(const std::string& checkpoint_path);

// OK when the checkpoint's bytes match its checksum file, or when it has none (a checkpoint of a
// release before checksums: unverified; loading it is the only test). DATA_LOSS naming both
// digests when they differ or the checksum file is unreadable; NOT_FOUND when there is no file.
Status VerifyCheckpoint(const std::string& path);

// Where a run resumes from under --resume (auto | never | PATH).
struct ResumeChoice {
  std::string path;                  // the checkpoint loaded; "" when the run starts afresh
  std::vector<std::string> skipped;  // "PATH: why" for each damaged checkpoint passed over
};

// Calls load(path) for the checkpoints the run may resume from, newest first, until one loads:
// under "auto" every checkpoint in `checkpoint_dir` (none: start afresh), skipping one that fails
// VerifyCheckpoint or whose load answers DATA_LOSS; under "never" none; else `resume` itself, whose
// damage is an error; a `resume` that no longer exists gives way to the newest intact checkpoint after
// it in its folder (an attempt cut off from the coordinator trains on and prunes), noted in `skipped`. Any other error of `load` is returned at once; DATA_LOSS listing them when
// every checkpoint there is damaged.
StatusOr<ResumeChoice> ResumeFromNewestIntact(const std::string& resume, const std::string& checkpoint_dir,
                                              const std::function<Status(const std::string& path)>& load);

// Creates `dir` (and parents), calls write(temp_path) to fill a temporary file, then publishes its
// checksum and it as CheckpointPath(dir, step) atomically and keeps only the newest `keep`
// checkpoints (with their checksums; the one just written is intact, so the newest intact one is
// never removed).
Status WriteCheckpointAtomically(const std::string& dir, int64_t step, int64_t keep,
                                 const std::function<Status(const std::string& temp_path)>& write);

// The first dotted key path where a checkpoint's stored identity and the run's differ ("(root)" for
// documents of different types at the top), or "" when they are equal: what a resume that is
// refused for another config names.
std::string FirstIdentityDifference(const nlohmann::json& stored, const nlohmann::json& expected);

}  // namespace rung
