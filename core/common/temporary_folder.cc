#include "core/common/temporary_folder.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace rung {

StatusOr<TemporaryFolder> TemporaryFolder::Make(const std::string& prefix) {
  std::error_code error;
  std::string pattern = (std::filesystem::temp_directory_path(error) / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status::Internal("cannot create a temporary folder " + pattern + ": " + std::strerror(errno));
  }
  return TemporaryFolder(pattern);
}

TemporaryFolder::TemporaryFolder(TemporaryFolder&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code error;
  if (!path_.empty()) std::filesystem::remove_all(path_, error);
}

std::string TemporaryFolder::File(const std::string& name) const {
  return (std::filesystem::path(path_) / name).string();
}

}  // namespace rung
