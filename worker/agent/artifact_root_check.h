// worker/agent/artifact_root_check.h
//
// Whether this worker sees the coordinator's artifact root, the folder its registration named
// (RegisterResponse.artifact_root and artifact_root_id): trainers write every checkpoint under it and
// resume from what other workers wrote there, so a worker that sees some other folder at that path
// (the shared mount is missing, or another file system is mounted there) must lease nothing, or its
// trials would "resume" from nothing elsewhere. The root is usable here when
// <root>/.rung-artifact-root is there and holds the coordinator's id (core/common/artifact_root_marker.h),
// and a file can be created in the root and removed. The agent checks after each registration that
// names a root, and while the check fails leases nothing and checks again every
// kArtifactRootRecheckInterval (agent.h).
//
// Example:
//   Status mounted = CheckArtifactRoot("/srv/rung/artifacts", registered.artifact_root_id());
//   if (!mounted.ok()) AgentLog(ArtifactRootNotMountedLine("/srv/rung/artifacts", mounted));
//
// Thread safety: reentrant.
#pragma once

#include <chrono>
#include <string>

#include "core/common/status.h"

namespace rung::agent {

inline constexpr std::chrono::seconds kArtifactRootRecheckInterval{10};

// OK when `root` is usable here as the coordinator's root of marker id `id`; else FAILED_PRECONDITION
// saying why, in the words the log line puts in parentheses:
//   "no .rung-artifact-root: No such file or directory"        (nor when a folder on the way is missing)
//   "its .rung-artifact-root cannot be used: <what is wrong>"  (unreadable, or not a marker)
//   "it holds id 1f..., the coordinator's is 8c..."
//   "not writable: Read-only file system"                      (a file could not be created, or removed;
//                                                              a full disk or quota is not this check's)
Status CheckArtifactRoot(const std::string& root, const std::string& id);

// The one line the agent logs when the check fails:
// "the coordinator's artifact root ROOT is not mounted here (WHY): this worker leases nothing until it
// is; checked again every 10 s".
std::string ArtifactRootNotMountedLine(const std::string& root, const Status& why);

// The line once it passes again: "the coordinator's artifact root ROOT is mounted here again: leasing
// resumes".
std::string ArtifactRootMountedAgainLine(const std::string& root);

}  // namespace rung::agent
