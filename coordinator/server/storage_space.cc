#include "coordinator/server/storage_space.h"

#include <filesystem>

#include "core/common/free_space.h"
#include "core/common/write_error.h"

namespace rung::server {
namespace {

// Absolute, so that the words name a place wherever the reader stands.
std::string Absolute(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

std::string FolderOf(const std::string& database_path) {
  return std::filesystem::path(Absolute(database_path)).parent_path().string();
}

std::string Shortfall(const std::string& folder, uint64_t free, uint64_t need, const std::string& what) {
  return "low disk space at " + folder + ": " + HumanBytes(free) + " free, and this sweep's " + what +
         " need about " + HumanBytes(need) + " (an estimate: 12 bytes a parameter a checkpoint, 4 KiB a logged " +
         "record); free space there, or the sweep stops when the disk fills (no work acknowledged is lost)";
}

}  // namespace

std::string DatabaseSpaceWarning(const std::string& database_path) {
  const std::string folder = FolderOf(database_path);
  const StatusOr<uint64_t> free = FreeBytesAt(folder);
  if (!free.ok() || *free >= kFullDiskFreeBytes) return "";
  return std::string(kNoSpaceMessage) + folder + " (" + HumanBytes(*free) + " free): the coordinator's database " +
         Absolute(database_path) + " cannot grow, so submissions, metrics and state changes are refused " +
         "(RESOURCE_EXHAUSTED) while reads are served; free space there";
}

std::vector<std::string> SubmissionSpaceWarnings(const std::string& database_path, const std::string& artifact_root,
                                                 const StorageNeeds& needs) {
  const std::string folder = FolderOf(database_path);
  const StatusOr<DiskSpace> database = DiskSpaceAt(folder);
  const StatusOr<DiskSpace> artifacts = DiskSpaceAt(artifact_root);
  std::vector<std::string> warnings;
  if (database.ok() && artifacts.ok() && database->file_system_id == artifacts->file_system_id) {
    const uint64_t need = needs.database_bytes + needs.checkpoint_bytes;
    if (database->free_bytes < need) {
      warnings.push_back(Shortfall(folder, database->free_bytes, need, "database and checkpoints"));
    }
    return warnings;
  }
  if (database.ok() && database->free_bytes < needs.database_bytes) {
    warnings.push_back(Shortfall(folder, database->free_bytes, needs.database_bytes, "database records"));
  }
  if (artifacts.ok() && artifacts->free_bytes < needs.checkpoint_bytes) {
    warnings.push_back(Shortfall(Absolute(artifact_root), artifacts->free_bytes, needs.checkpoint_bytes, "checkpoints"));
  }
  return warnings;
}

}  // namespace rung::server
