#include "worker/agent/checkpoint_retention.h"

#include <filesystem>
#include <iterator>

#include "core/train/checkpoint.h"

namespace rung::agent {

StatusOr<RetentionAfterSuccess> ParseRetentionAfterSuccess(const std::string& name) {
  if (name == "final") return RetentionAfterSuccess::kFinal;
  if (name == "all") return RetentionAfterSuccess::kAll;
  if (name == "none") return RetentionAfterSuccess::kNone;
  return Status::InvalidArgument("checkpoint retention '" + name + "' is not one of final, all, none");
}

StatusOr<int> ApplyRetentionAfterSuccess(RetentionAfterSuccess mode, const std::string& final_dir,
                                         const std::vector<std::string>& earlier_dirs) {
  if (mode == RetentionAfterSuccess::kAll) return 0;
  std::vector<std::string> doomed;
  std::vector<std::string> final_checkpoints = ListCheckpoints(final_dir);  // oldest first
  if (mode == RetentionAfterSuccess::kFinal) {
    // The newest intact one stays (a damaged newer one goes with the rest).
    for (auto kept = final_checkpoints.rbegin(); kept != final_checkpoints.rend(); ++kept) {
      if (VerifyCheckpoint(*kept).ok()) {
        final_checkpoints.erase(std::next(kept).base());
        break;
      }
    }
  }
  doomed = std::move(final_checkpoints);
  for (const std::string& dir : earlier_dirs) {
    if (dir == final_dir) continue;
    for (std::string& path : ListCheckpoints(dir)) doomed.push_back(std::move(path));
  }
  int removed = 0;
  std::string failures;
  for (const std::string& path : doomed) {
    std::error_code error;
    if (std::filesystem::remove(path, error)) {
      ++removed;
      std::filesystem::remove(ChecksumPath(path), error);
    } else if (error) {
      failures += (failures.empty() ? "" : "; ") + path + ": " + error.message();
    }
  }
  if (!failures.empty()) return Status::Internal("cannot remove checkpoints: " + failures);
  return removed;
}

}  // namespace rung::agent
