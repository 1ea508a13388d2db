// worker/agent/artifact_root_check.cc
#include "worker/agent/artifact_root_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/common/artifact_root_marker.h"
#include "worker/agent/log.h"

namespace rung::agent {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

// Creates a file in `root` and removes it: "" when both worked, else what failed. A full disk or
// quota is no missing mount: the full-disk path stops leasing for that (agent.h, disk_space.h).
std::string WriteProblem(const std::string& root) {
  std::string path = (std::filesystem::path(root) / ".rung-write-check-XXXXXX").string();
  const int fd = ::mkstemp(path.data());
  if (fd < 0 && (errno == ENOSPC || errno == EDQUOT)) return "";
  if (fd < 0) return "not writable: " + ErrnoText();
  ::close(fd);
  if (::unlink(path.c_str()) != 0) return "not writable: cannot remove " + path + ": " + ErrnoText();
  return "";
}

}  // namespace

Status CheckArtifactRoot(const std::string& root, const std::string& id) {
  struct stat info {};
  if (::stat(ArtifactRootMarkerPath(root).c_str(), &info) != 0) {
    return Status::FailedPrecondition(std::string("no ") + kArtifactRootMarkerName + ": " + ErrnoText());
  }
  StatusOr<ArtifactRootMarker> marker = ReadArtifactRootMarker(root);
  if (!marker.ok()) {
    return Status::FailedPrecondition(std::string("its ") + kArtifactRootMarkerName +
                                      " cannot be used: " + marker.status().message());
  }
  if (marker->id != id) {
    return Status::FailedPrecondition("it holds id " + marker->id + ", the coordinator's is " + id);
  }
  if (const std::string problem = WriteProblem(root); !problem.empty()) return Status::FailedPrecondition(problem);
  return Status::Ok();
}

std::string ArtifactRootNotMountedLine(const std::string& root, const Status& why) {
  return "the coordinator's artifact root " + root + " is not mounted here (" + why.message() +
         "): this worker leases nothing until it is; checked again every " +
         SecondsText(kArtifactRootRecheckInterval);
}

std::string ArtifactRootMountedAgainLine(const std::string& root) {
  return "the coordinator's artifact root " + root + " is mounted here again: leasing resumes";
}

}  // namespace rung::agent
