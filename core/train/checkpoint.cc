#include "core/train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace rung {
namespace fs = std::filesystem;

std::string CheckpointPath(const std::string& dir, int64_t step) {
  char name[64];
  std::snprintf(name, sizeof(name), "ckpt-%010lld.pt", static_cast<long long>(step));
  return (fs::path(dir) / name).string();
}

std::vector<std::string> ListCheckpoints(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return paths;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("ckpt-", 0) == 0 && name.size() > 3 && name.substr(name.size() - 3) == ".pt") {
      paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

namespace {
Status SyncPath(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return Status::Internal("open " + path + ": " + std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Status::Internal("fsync " + path + ": " + std::strerror(errno));
  return Status::Ok();
}
}  // namespace

Status WriteCheckpointAtomically(const std::string& dir, int64_t step, int64_t keep,
                                 const std::function<Status(const std::string& temp_path)>& write) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return Status::Internal("cannot create checkpoint directory " + dir + ": " + error.message());
  const std::string final_path = CheckpointPath(dir, step);
  const std::string temp_path = final_path + ".tmp." + std::to_string(::getpid());
  Status status = write(temp_path);
  if (status.ok()) status = SyncPath(temp_path, false);
  if (status.ok() && std::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    status = Status::Internal("rename " + temp_path + " -> " + final_path + ": " + std::strerror(errno));
  }
  if (!status.ok()) {
    fs::remove(temp_path, error);
    return status;
  }
  RUNG_RETURN_IF_ERROR(SyncPath(dir, true));
  std::vector<std::string> existing = ListCheckpoints(dir);
  for (size_t index = 0; index + static_cast<size_t>(keep) < existing.size(); ++index) {
    fs::remove(existing[index], error);
  }
  return Status::Ok();
}

namespace {

std::string DifferenceAt(const nlohmann::json& a, const nlohmann::json& b, const std::string& path) {
  if (a.type() != b.type() || !a.is_object()) return a == b ? "" : (path.empty() ? "(root)" : path);
  for (auto it = a.begin(); it != a.end(); ++it) {
    const std::string child = path.empty() ? it.key() : path + "." + it.key();
    if (!b.contains(it.key())) return child;
    std::string difference = DifferenceAt(it.value(), b.at(it.key()), child);
    if (!difference.empty()) return difference;
  }
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (!a.contains(it.key())) return path.empty() ? it.key() : path + "." + it.key();
  }
  return "";
}

}  // namespace

std::string FirstIdentityDifference(const nlohmann::json& stored, const nlohmann::json& expected) {
  return DifferenceAt(stored, expected, "");
}

}  // namespace rung
