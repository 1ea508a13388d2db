#include "core/data/shard_verification_record.h"

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/file_bytes.h"
#include "core/common/sha256.h"
#include "core/common/user_cache_folder.h"

namespace rung {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kFormat[] = "rung-shard-verification";
constexpr std::uintmax_t kMaxRecordBytes = std::uintmax_t{64} << 20;

// The shards a record file holds for `folder`; empty when it is missing or not a record of that folder.
std::map<std::string, ShardVerificationRecord::FileState> ReadRecord(const std::string& path,
                                                                      const std::string& folder) {
  std::map<std::string, ShardVerificationRecord::FileState> shards;
  std::error_code error;
  if (path.empty() || !fs::is_regular_file(path, error) || fs::file_size(path, error) > kMaxRecordBytes || error) {
    return shards;
  }
  std::string text;
  if (!ReadFileBytes(path, "", &text).ok()) return shards;
  const json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object() || document.value("format", json()) != kFormat ||
      document.value("version", json()) != json(1) || document.value("folder", json()) != folder) {
    return shards;
  }
  auto listed = document.find("shards");
  if (listed == document.end() || !listed->is_object()) return shards;
  for (const auto& [name, entry] : listed->items()) {
    if (!entry.is_object()) continue;
    const json bytes = entry.value("bytes", json()), mtime = entry.value("mtime_ns", json()),
               ctime = entry.value("ctime_ns", json()), inode = entry.value("inode", json()),
               sha256 = entry.value("sha256", json());
    if (!bytes.is_number_integer() || !mtime.is_number_integer() || !ctime.is_number_integer() ||
        !inode.is_number_unsigned() || !sha256.is_string()) {
      continue;
    }
    shards[name] = {bytes.get<int64_t>(), mtime.get<int64_t>(), ctime.get<int64_t>(), inode.get<uint64_t>(),
                    sha256.get<std::string>()};
  }
  return shards;
}

}  // namespace

ShardVerificationRecord ShardVerificationRecord::Load(const std::string& folder) {
  ShardVerificationRecord record;
  std::error_code error;
  fs::path absolute = fs::weakly_canonical(fs::absolute(folder, error), error);
  if (error) absolute = fs::absolute(folder, error);
  record.folder_ = absolute.lexically_normal().string();
  while (record.folder_.size() > 1 && record.folder_.back() == '/') record.folder_.pop_back();
  record.in_folder_ = ReadRecord(record.folder_record_path(), record.folder_);
  record.in_cache_ = ReadRecord(record.cache_record_path(), record.folder_);
  return record;
}

std::string ShardVerificationRecord::folder_record_path() const {
  return (fs::path(folder_) / kShardVerificationFile).string();
}

std::string ShardVerificationRecord::cache_record_path() const {
  const std::string cache = UserCacheFolder();
  if (cache.empty()) return "";
  return cache + "/verified-shards/" + Sha256Hex(folder_) + ".json";
}

bool ShardVerificationRecord::Verified(const std::string& name, const FileState& state) const {
  for (const auto* shards : {&in_folder_, &in_cache_}) {
    auto found = shards->find(name);
    if (found != shards->end() && found->second == state) return true;
  }
  return false;
}

void ShardVerificationRecord::Keep(const std::string& name, const FileState& state) { kept_[name] = state; }

bool ShardVerificationRecord::changed() const { return kept_ != in_folder_ && kept_ != in_cache_; }

StatusOr<std::string> ShardVerificationRecord::Save() const {
  json shards = json::object();
  for (const auto& [name, state] : kept_) {
    shards[name] = {{"bytes", state.bytes},
                    {"mtime_ns", state.mtime_ns},
                    {"ctime_ns", state.ctime_ns},
                    {"inode", state.inode},
                    {"sha256", state.sha256}};
  }
  const std::string text =
      json{{"format", kFormat}, {"version", 1}, {"folder", folder_}, {"shards", shards}}.dump() + "\n";
  const Status beside = WriteFileAtomically(folder_record_path(), {text});
  if (beside.ok()) return folder_record_path();
  const std::string cache = cache_record_path();
  if (cache.empty()) {
    return Status::Internal(beside.message() + "; and no user cache folder (set XDG_CACHE_HOME or HOME)");
  }
  std::error_code error;
  fs::create_directories(fs::path(cache).parent_path(), error);
  const Status cached = error ? Status::Internal("cannot create " + fs::path(cache).parent_path().string() + ": " +
                                                 error.message())
                              : WriteFileAtomically(cache, {text});
  if (cached.ok()) return cache;
  return Status::Internal(beside.message() + "; and " + cached.message());
}

}  // namespace rung
