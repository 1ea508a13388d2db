#include "core/train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/atomic_file.h"
#include "core/common/sha256.h"
#include "core/common/write_error.h"

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

std::string ChecksumPath(const std::string& checkpoint_path) { return checkpoint_path + ".sha256"; }

Status VerifyCheckpoint(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) return Status::NotFound("checkpoint " + path + " does not exist");
  std::ifstream stored_file(ChecksumPath(path));
  if (!stored_file) return Status::Ok();  // written before checksums
  std::string stored;
  stored_file >> stored;
  RUNG_ASSIGN_OR_RETURN(std::string actual, Sha256FileHex(path));
  if (stored != actual) {
    return Status::DataLoss("checkpoint " + path + " is damaged: its SHA-256 is " + actual + ", " +
                            ChecksumPath(path) + " says " + (stored.empty() ? "nothing" : stored));
  }
  return Status::Ok();
}

StatusOr<ResumeChoice> ResumeFromNewestIntact(const std::string& resume, const std::string& checkpoint_dir,
                                              const std::function<Status(const std::string& path)>& load) {
  ResumeChoice choice;
  if (resume == "never") return choice;
  if (resume != "auto") {
    std::error_code error;
    if (!fs::exists(resume, error)) {
      // Gone: an attempt that went on training while cut off from the coordinator (its lease expired)
      // pruned it after writing newer ones into the same folder. Resume from the newest intact one of
      // those instead: each holds every step record before it.
      const fs::path named(resume);
      std::vector<std::string> newer;
      for (const std::string& candidate : ListCheckpoints(named.parent_path().string())) {
        if (fs::path(candidate).filename().string() > named.filename().string()) newer.push_back(candidate);
      }
      for (auto candidate = newer.rbegin(); candidate != newer.rend(); ++candidate) {
        Status loaded = VerifyCheckpoint(*candidate);
        if (loaded.ok()) loaded = load(*candidate);
        if (loaded.ok()) {
          choice.path = *candidate;
          choice.skipped.push_back(resume + ": gone (pruned by a later checkpoint of its attempt); resumed from " +
                                   *candidate);
          return choice;
        }
        if (loaded.code() != StatusCode::kDataLoss) return loaded;
      }
    }
    RUNG_RETURN_IF_ERROR(VerifyCheckpoint(resume));
    RUNG_RETURN_IF_ERROR(load(resume));
    choice.path = resume;
    return choice;
  }
  if (checkpoint_dir.empty()) return choice;
  std::vector<std::string> candidates = ListCheckpoints(checkpoint_dir);
  for (auto candidate = candidates.rbegin(); candidate != candidates.rend(); ++candidate) {
    Status loaded = VerifyCheckpoint(*candidate);
    if (loaded.ok()) loaded = load(*candidate);
    if (loaded.ok()) {
      choice.path = *candidate;
      return choice;
    }
    if (loaded.code() != StatusCode::kDataLoss) return loaded;
    choice.skipped.push_back(*candidate + ": " + loaded.message());
  }
  if (choice.skipped.empty()) return choice;
  std::string all;
  for (const std::string& skipped : choice.skipped) all += (all.empty() ? "" : "; ") + skipped;
  return Status::DataLoss("no intact checkpoint to resume from in " + checkpoint_dir + ": " + all +
                          " (remove them to start the trial afresh)");
}

namespace {
Status SyncPath(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return Status::Internal("open " + path + ": " + std::strerror(errno));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return WriteError("fsync of", path, errno);
  return Status::Ok();
}
}  // namespace

Status WriteCheckpointAtomically(const std::string& dir, int64_t step, int64_t keep,
                                 const std::function<Status(const std::string& temp_path)>& write) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    if (error.value() == ENOSPC || error.value() == EDQUOT) return WriteError("creating", dir, error.value());
    return Status::Internal("cannot create checkpoint directory " + dir + ": " + error.message());
  }
  const std::string final_path = CheckpointPath(dir, step);
  const std::string temp_path = final_path + ".tmp." + std::to_string(::getpid());
  Status status = write(temp_path);
  if (status.ok()) status = SyncPath(temp_path, false);
  // The checksum of the bytes on disk, published before the checkpoint: a checkpoint without one is
  // never of this release.
  if (status.ok()) {
    StatusOr<std::string> digest = Sha256FileHex(temp_path);
    status = digest.status();
    if (status.ok()) status = WriteFileAtomically(ChecksumPath(final_path), {*digest, "\n"});
  }
  if (status.ok() && std::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    status = WriteError("renaming", temp_path + " -> " + final_path, errno);
  }
  if (!status.ok()) {
    fs::remove(temp_path, error);
    if (!fs::exists(final_path, error)) fs::remove(ChecksumPath(final_path), error);
    return status;
  }
  RUNG_RETURN_IF_ERROR(SyncPath(dir, true));
  std::vector<std::string> existing = ListCheckpoints(dir);
  for (size_t index = 0; index + static_cast<size_t>(keep) < existing.size(); ++index) {
    fs::remove(existing[index], error);
    fs::remove(ChecksumPath(existing[index]), error);
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
