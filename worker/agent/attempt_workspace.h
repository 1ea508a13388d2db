// worker/agent/attempt_workspace.h
//
// The files of one leased attempt on the worker, and where its trainer resumes from:
//
//   <work dir>/trial-<trial id>/attempt-<n>/
//     trial.json      the lease's resolved config: what `rung-train --config` reads
//     trainer.log     the trainer's stderr
//     records.jsonl   every line the trainer printed on stdout, as the agent read it
//     checkpoints/    the checkpoints, unless the lease names a folder (the coordinator's
//                     <artifact root>/<sweep>/<trial index>/attempt-<n>, shared by all workers);
//                     created by the trainer with its first checkpoint, not here (the workspace
//                     only checks that it can be: it exists as a writable folder, or its nearest
//                     existing ancestor is one)
//
// Every attempt writes its checkpoints into its own folder, so a trainer orphaned from an older
// attempt can never overwrite the checkpoints of the attempt that replaced it. The new attempt
// resumes from the newest checkpoint of the first earlier attempt's folder (newest attempt first)
// that holds one. Relative paths in a lease are taken relative to the agent's working directory; the
// workspace holds absolute paths only.
//
// Example:
//   StatusOr<AttemptWorkspace> workspace = PrepareAttemptWorkspace("/var/lib/rung-worker", lease);
//   launch.config_path = workspace->config_path;
//   launch.resume = workspace->resume;
//
// Thread safety: reentrant functions.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "proto/rung.pb.h"

namespace rung::agent {

struct AttemptWorkspace {
  std::string dir;             // <work dir>/trial-<id>/attempt-<n>, absolute
  std::string config_path;     // dir/trial.json
  std::string stderr_path;     // dir/trainer.log
  std::string records_path;    // dir/records.jsonl
  std::string checkpoint_dir;  // absolute; not created (the trainer creates it when it checkpoints)
  std::string resume;          // --resume: the checkpoint to resume from, or "never"
};

// Creates the attempt's folder, writes trial.json, checks that the checkpoint folder can be created
// and picks the resume point.
// Errors: INVALID_ARGUMENT (a lease without trial id or attempt, or whose config is not JSON),
// FAILED_PRECONDITION (a folder or file cannot be written, or the checkpoint folder cannot be
// created: the message names it).
StatusOr<AttemptWorkspace> PrepareAttemptWorkspace(const std::string& work_dir, const v1::TrialLease& lease);

// The --resume argument for earlier attempts' checkpoint folders, newest attempt first: the newest
// checkpoint (core/train/checkpoint.h naming) of the first folder that holds one, or "never".
std::string ResumePoint(const std::vector<std::string>& dirs_newest_first);

}  // namespace rung::agent
