// core/common/artifact_root_marker.h
//
// The file that tells a coordinator's artifact root from an empty folder of the same path:
// <root>/.rung-artifact-root, one JSON object
//   {"id": "<32 lower-case hex digits: 128 random bits>", "created_at": "2024-05-01 10:00:00Z"}
// The coordinator makes sure its root has one when it starts (EnsureArtifactRootMarker: written once,
// atomically, then kept, so its id is the same across restarts on the same root) and tells each
// worker the root and the id when it registers (RegisterResponse.artifact_root, artifact_root_id).
// A worker reads it (ReadArtifactRootMarker) to know that the root is mounted where it runs: a
// folder without it, or with another id, is not the coordinator's (worker/agent/artifact_root_check.h).
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(ArtifactRootMarker marker, EnsureArtifactRootMarker("/srv/rung/artifacts"));
//   response.set_artifact_root_id(marker.id);
//
// Thread safety: reentrant. Two coordinators that create the marker of one root at once each write a
// whole file; the last rename wins, and each returns the marker it then reads.
#pragma once

#include <string>

#include "core/common/status.h"

namespace rung {

inline constexpr char kArtifactRootMarkerName[] = ".rung-artifact-root";

struct ArtifactRootMarker {
  std::string root;        // the folder, as given
  std::string id;          // 32 lower-case hex digits
  std::string created_at;  // when the coordinator wrote it, "2024-05-01 10:00:00Z" (utc_time.h)
};

// <root>/.rung-artifact-root.
std::string ArtifactRootMarkerPath(const std::string& root);

// The marker of `root`. Errors: NOT_FOUND "cannot open PATH: <errno text>" when there is no such
// file (or a folder on the way is missing or not a folder); FAILED_PRECONDITION when it cannot be
// read (not a regular file, permissions, I/O); INVALID_ARGUMENT "PATH is not an artifact root
// marker: <what is wrong>" when it does not hold one (not JSON, no id of 32 hex digits, no
// created_at, too large).
StatusOr<ArtifactRootMarker> ReadArtifactRootMarker(const std::string& root);

// The marker of `root`, written first when there is none: `root` is created (with its parents) when
// missing, and the marker gets a fresh id and the current time. A marker already there is kept as it
// is. Errors: ReadArtifactRootMarker's for a marker that is there but unreadable or not valid (it is
// never overwritten); INVALID_ARGUMENT when the root cannot be created or written (not a folder, no
// permission), RESOURCE_EXHAUSTED when its disk is full, INTERNAL otherwise (core/common/atomic_file.h).
StatusOr<ArtifactRootMarker> EnsureArtifactRootMarker(const std::string& root);

}  // namespace rung
