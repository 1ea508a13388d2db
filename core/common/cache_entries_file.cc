#include "core/common/cache_entries_file.h"

#include <filesystem>
#include <system_error>

#include "core/common/atomic_file.h"
#include "core/common/file_bytes.h"

namespace rung {
namespace {

constexpr std::uintmax_t kMaxCacheBytes = 1 << 20;

}  // namespace

StatusOr<nlohmann::json> ReadCacheEntries(const std::string& path, const std::string& what) {
  std::error_code error;
  if (path.empty() || !std::filesystem::exists(path, error)) return Status::NotFound("no cache file " + path);
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > kMaxCacheBytes) {
    return Status::FailedPrecondition(error ? error.message() : "larger than 1 MiB");
  }
  std::string text;
  if (Status read = ReadFileBytes(path, "", &text); !read.ok()) return Status::FailedPrecondition(read.message());
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object() || document.value("version", nlohmann::json()) != nlohmann::json(1) ||
      !document.contains("entries") || !document["entries"].is_array()) {
    return Status::FailedPrecondition("not a rung " + what + " file (JSON {\"version\": 1, \"entries\": [...]})");
  }
  return document["entries"];
}

Status WriteCacheEntries(const std::string& path, const nlohmann::json& entries) {
  if (path.empty()) return Status::Internal("no cache folder: set XDG_CACHE_HOME or HOME");
  std::error_code error;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::filesystem::create_directories(folder, error);
  if (error) return Status::Internal("cannot create " + folder.string() + ": " + error.message());
  const std::string text = nlohmann::json{{"version", 1}, {"entries", entries}}.dump(2) + "\n";
  return WriteFileAtomically(path, {text});
}

}  // namespace rung
