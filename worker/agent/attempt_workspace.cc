// worker/agent/attempt_workspace.cc
#include "worker/agent/attempt_workspace.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/train/checkpoint.h"
#include "proto/config_value.h"

namespace rung::agent {
namespace fs = std::filesystem;

namespace {

Status CreateFolder(const fs::path& path) {
  std::error_code error;
  // The common case first: the parent exists (one mkdir instead of a stat per component).
  if (fs::create_directory(path, error) || (!error && fs::is_directory(path, error))) return Status::Ok();
  error.clear();
  fs::create_directories(path, error);
  if (error) return Status::FailedPrecondition("cannot create folder " + path.string() + ": " + error.message());
  return Status::Ok();
}

// OK when `path` is a folder this process may write into, or when it does not exist and its nearest
// existing ancestor is one (so that the trainer can create it with its first checkpoint).
Status CheckFolderCreatable(const fs::path& path) {
  for (fs::path at = path;; at = at.parent_path()) {
    std::error_code error;
    const fs::file_status status = fs::status(at, error);
    if (status.type() == fs::file_type::not_found) {
      if (at == at.parent_path() || at.parent_path().empty()) break;
      continue;
    }
    if (error) return Status::FailedPrecondition("cannot create folder " + path.string() + ": " + error.message());
    if (status.type() != fs::file_type::directory) {
      return Status::FailedPrecondition("cannot create folder " + path.string() + ": " + at.string() +
                                        " is not a folder");
    }
    if (::access(at.c_str(), W_OK | X_OK) != 0) {
      return Status::FailedPrecondition("cannot create folder " + path.string() + ": " + at.string() +
                                        " is not writable");
    }
    return Status::Ok();
  }
  return Status::FailedPrecondition("cannot create folder " + path.string() + ": no ancestor exists");
}

}  // namespace

std::string ResumePoint(const std::vector<std::string>& dirs_newest_first) {
  for (const std::string& dir : dirs_newest_first) {
    std::vector<std::string> checkpoints = ListCheckpoints(dir);
    if (!checkpoints.empty()) return checkpoints.back();
  }
  return "never";
}

StatusOr<AttemptWorkspace> PrepareAttemptWorkspace(const std::string& work_dir, const v1::TrialLease& lease) {
  if (lease.trial_id() <= 0 || lease.attempt() <= 0) {
    return Status::InvalidArgument("a lease without a trial id or attempt number");
  }
  if (!lease.has_config()) {
    return Status::InvalidArgument("the lease of trial " + std::to_string(lease.trial_id()) + " has no config");
  }
  std::error_code error;
  const fs::path root = fs::absolute(work_dir, error);
  if (error) return Status::FailedPrecondition("cannot resolve work dir " + work_dir + ": " + error.message());
  const fs::path dir =
      root / ("trial-" + std::to_string(lease.trial_id())) / ("attempt-" + std::to_string(lease.attempt()));
  RUNG_RETURN_IF_ERROR(CreateFolder(dir));

  AttemptWorkspace workspace;
  workspace.dir = dir.string();
  workspace.config_path = (dir / "trial.json").string();
  workspace.stderr_path = (dir / "trainer.log").string();
  workspace.records_path = (dir / "records.jsonl").string();
  const fs::path checkpoints =
      lease.checkpoint_dir().empty() ? dir / "checkpoints" : fs::absolute(lease.checkpoint_dir(), error);
  if (error) return Status::FailedPrecondition("cannot resolve " + lease.checkpoint_dir() + ": " + error.message());
  workspace.checkpoint_dir = checkpoints.lexically_normal().string();
  // Not created here: the trainer creates it with its first checkpoint (core/train/checkpoint.h), so
  // an attempt that never checkpoints leaves no folder. A location that could not be created is
  // refused before the spawn.
  RUNG_RETURN_IF_ERROR(CheckFolderCreatable(workspace.checkpoint_dir));

  {
    std::ofstream config(workspace.config_path, std::ios::trunc);
    config << wire::FromConfigObject(lease.config()).dump() << "\n";
    config.flush();
    if (!config) return Status::FailedPrecondition("cannot write " + workspace.config_path);
  }

  std::vector<std::string> resume_dirs;
  for (const std::string& earlier : lease.resume_from_dirs()) {
    resume_dirs.push_back(fs::absolute(earlier, error).string());
  }
  workspace.resume = ResumePoint(resume_dirs);
  return workspace;
}

}  // namespace rung::agent
