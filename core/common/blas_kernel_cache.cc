#include "core/common/blas_kernel_cache.h"

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/file_bytes.h"
#include "core/common/user_cache_folder.h"

namespace rung {
namespace {

using json = nlohmann::json;
constexpr std::uintmax_t kMaxCacheBytes = 1 << 20;

// The entries of a readable cache file, else an empty array.
json ReadEntries(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > kMaxCacheBytes) return json::array();
  std::string text;
  if (!ReadFileBytes(path, "", &text).ok()) return json::array();
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object() || document.value("version", 0) != 1 || !document.contains("entries") ||
      !document["entries"].is_array()) {
    return json::array();
  }
  return document["entries"];
}

bool ParseOutcome(const std::string& name, KernelVerdict::Outcome* outcome) {
  for (KernelVerdict::Outcome candidate : {KernelVerdict::Outcome::kPassed, KernelVerdict::Outcome::kUnavailable,
                                           KernelVerdict::Outcome::kWrong, KernelVerdict::Outcome::kCrashed}) {
    if (name == OutcomeName(candidate)) {
      *outcome = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace

const char* OutcomeName(KernelVerdict::Outcome outcome) {
  switch (outcome) {
    case KernelVerdict::Outcome::kPassed: return "passed";
    case KernelVerdict::Outcome::kUnavailable: return "unavailable";
    case KernelVerdict::Outcome::kWrong: return "wrong";
    case KernelVerdict::Outcome::kCrashed: return "crashed";
  }
  return "unavailable";
}

std::string BlasKernelCachePath() {
  const std::string folder = UserCacheFolder();
  return folder.empty() ? "" : folder + "/blas-kernel.json";
}

std::vector<KernelVerdict> ReadKernelVerdicts(const std::string& path, const std::string& key) {
  std::vector<KernelVerdict> verdicts;
  if (path.empty()) return verdicts;
  for (const json& entry : ReadEntries(path)) {
    if (!entry.is_object() || entry.value("key", json()) != key) continue;
    const json list = entry.value("verdicts", json());
    if (!list.is_array()) return {};
    for (const json& item : list) {
      if (!item.is_object()) continue;
      const json kernel = item.value("kernel", json()), outcome = item.value("outcome", json()),
                 ran = item.value("ran", json()), detail = item.value("detail", json());
      KernelVerdict verdict;
      if (!kernel.is_string() || !outcome.is_string() || !ran.is_string() || !detail.is_string() ||
          !ParseOutcome(outcome.get<std::string>(), &verdict.outcome)) {
        continue;
      }
      verdict.kernel = kernel.get<std::string>();
      verdict.ran = ran.get<std::string>();
      verdict.detail = detail.get<std::string>();
      verdicts.push_back(std::move(verdict));
    }
    return verdicts;
  }
  return verdicts;
}

Status WriteKernelVerdicts(const std::string& path, const std::string& key, const std::string& checked_at,
                           const std::vector<KernelVerdict>& verdicts) {
  if (path.empty()) return Status::Internal("no cache folder: set XDG_CACHE_HOME or HOME");
  json entries = json::array();
  for (const json& entry : ReadEntries(path)) {
    if (entry.is_object() && entry.value("key", json()) != key) entries.push_back(entry);
  }
  json list = json::array();
  for (const KernelVerdict& verdict : verdicts) {
    list.push_back({{"kernel", verdict.kernel}, {"outcome", OutcomeName(verdict.outcome)}, {"ran", verdict.ran},
                    {"detail", verdict.detail}});
  }
  entries.push_back({{"key", key}, {"checked_at", checked_at}, {"verdicts", list}});
  std::error_code error;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::filesystem::create_directories(folder, error);
  if (error) return Status::Internal("cannot create " + folder.string() + ": " + error.message());
  const std::string text = json{{"version", 1}, {"entries", entries}}.dump(2) + "\n";
  return WriteFileAtomically(path, {text});
}

}  // namespace rung
