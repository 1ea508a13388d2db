#include "core/common/blas_kernel_cache.h"

#include <nlohmann/json.hpp>

#include "core/common/cache_entries_file.h"
#include "core/common/user_cache_folder.h"

namespace rung {
namespace {

using json = nlohmann::json;

// The entries of a readable cache file, else an empty array.
json ReadEntries(const std::string& path) {
  StatusOr<json> entries = ReadCacheEntries(path, "BLAS kernel cache");
  return entries.ok() ? *entries : json::array();
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
  return WriteCacheEntries(path, entries);
}

}  // namespace rung
