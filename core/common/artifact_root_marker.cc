// core/common/artifact_root_marker.cc
#include "core/common/artifact_root_marker.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/fresh_token.h"
#include "core/common/utc_time.h"

namespace rung {
namespace {

constexpr int kIdBytes = 16;  // 128 bits
constexpr size_t kMaxMarkerBytes = 4096;

bool IsLowerHex(const std::string& text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// What is wrong with `text` as a marker; "" when nothing is.
std::string MarkerProblem(const std::string& text, ArtifactRootMarker* marker) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return "not JSON";
  if (!json.is_object()) return "not a JSON object";
  const auto id = json.find("id");
  if (id == json.end() || !id->is_string() || id->get<std::string>().size() != 2 * kIdBytes ||
      !IsLowerHex(id->get<std::string>())) {
    return "no \"id\" of " + std::to_string(2 * kIdBytes) + " lower-case hex digits";
  }
  const auto created_at = json.find("created_at");
  if (created_at == json.end() || !created_at->is_string() || created_at->get<std::string>().empty()) {
    return "no \"created_at\" time";
  }
  marker->id = id->get<std::string>();
  marker->created_at = created_at->get<std::string>();
  return "";
}

}  // namespace

std::string ArtifactRootMarkerPath(const std::string& root) {
  return (std::filesystem::path(root) / kArtifactRootMarkerName).string();
}

StatusOr<ArtifactRootMarker> ReadArtifactRootMarker(const std::string& root) {
  const std::string path = ArtifactRootMarkerPath(root);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string message = "cannot open " + path + ": " + std::strerror(errno);
    if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound(message);
    return Status::FailedPrecondition(message);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::FailedPrecondition(path + " is not a regular file");
  }
  std::string text(kMaxMarkerBytes + 1, '\0');
  size_t size = 0;
  int read_errno = 0;
  while (size < text.size()) {
    const ssize_t got = ::read(fd, text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) read_errno = errno;
    if (got <= 0) break;
    size += static_cast<size_t>(got);
  }
  ::close(fd);
  if (read_errno != 0) return Status::FailedPrecondition("cannot read " + path + ": " + std::strerror(read_errno));
  if (size > kMaxMarkerBytes) {
    return Status::InvalidArgument(path + " is not an artifact root marker: larger than " +
                                   std::to_string(kMaxMarkerBytes) + " bytes");
  }
  text.resize(size);
  ArtifactRootMarker marker;
  marker.root = root;
  if (const std::string problem = MarkerProblem(text, &marker); !problem.empty()) {
    return Status::InvalidArgument(path + " is not an artifact root marker: " + problem);
  }
  return marker;
}

StatusOr<ArtifactRootMarker> EnsureArtifactRootMarker(const std::string& root) {
  std::error_code error;
  std::filesystem::create_directories(root, error);
  if (error && !std::filesystem::is_directory(root)) {
    return Status::InvalidArgument("cannot create the artifact root " + root + ": " + error.message());
  }
  StatusOr<ArtifactRootMarker> existing = ReadArtifactRootMarker(root);
  if (existing.status().code() != StatusCode::kNotFound) return existing;
  RUNG_ASSIGN_OR_RETURN(std::string id, FreshHexToken(kIdBytes));
  const nlohmann::json marker = {{"id", id}, {"created_at", UtcNow()}};
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(ArtifactRootMarkerPath(root), {marker.dump(), "\n"}));
  return ReadArtifactRootMarker(root);
}

}  // namespace rung
