#include "worker/agent/disk_space.h"

#include <filesystem>

#include "core/common/write_error.h"

namespace rung::agent {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::optional<std::string> NoSpaceFolder(const std::string& text) {
  const size_t at = text.find(kNoSpaceMessage);
  if (at == std::string::npos) return std::nullopt;
  const size_t begin = at + sizeof(kNoSpaceMessage) - 1;
  size_t end = text.find(" (while", begin);
  if (end == std::string::npos) end = text.find_first_of(" \n", begin);
  const std::string path = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  if (path.empty()) return std::nullopt;
  return fs::path(path).parent_path().string();
}

bool EnoughSpaceToLease(const std::string& folder) {
  const StatusOr<uint64_t> free = FreeBytesAt(folder);
  return !free.ok() || *free >= kMinFreeBytesToLease;  // a folder that cannot be probed does not stop it
}

}  // namespace rung::agent
