// core/data/shard_verification_record.h
//
// ShardVerificationRecord: which shards of a prepared folder (core/data/token_manifest.h) have had their
// whole SHA-256 checked against the manifest on this machine, so that later opens of the folder need not
// read every byte again. A shard stays verified while its size, modification and status change times
// (nanoseconds) and inode are what they were when it was hashed and the manifest still names the same
// SHA-256; a change to any of them and it is hashed again. (The status change time moves with every
// write and cannot be set back, so an edit that restores the modification time is still seen.)
//
// Where: FOLDER/.rung-verified.json beside the shards (a hidden name: nothing reads it as data), or,
// where the folder cannot be written, UserCacheFolder()/verified-shards/<SHA-256 of the folder's
// absolute path>.json (core/common/user_cache_folder.h). Load reads both; Save writes the first that
// takes it, atomically (core/common/atomic_file.h):
//   {"format": "rung-shard-verification", "version": 1, "folder": "/absolute/path",
//    "shards": {"train_000000.bin": {"bytes", "mtime_ns", "ctime_ns", "inode", "sha256"}, ...}}
// A record that is missing, unreadable, over 64 MiB, of another folder or not of this form counts as
// empty: the shards are hashed again, never trusted.
//
// Example:
//   ShardVerificationRecord record = ShardVerificationRecord::Load(folder);
//   if (!record.Verified(name, state)) { ...hash the file, compare... }
//   record.Keep(name, state);              // every shard of the manifest, verified now or before
//   if (record.changed()) record.Save();
//
// Thread safety: a value. Processes opening one folder at once each write the whole record (the last
// rename wins; each is correct).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/common/status.h"

namespace rung {

inline constexpr char kShardVerificationFile[] = ".rung-verified.json";

class ShardVerificationRecord {
 public:
  // What a shard was like when it was verified.
  struct FileState {
    int64_t bytes = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    uint64_t inode = 0;
    std::string sha256;  // the manifest's, which the file's bytes hashed to

    bool operator==(const FileState& other) const {
      return bytes == other.bytes && mtime_ns == other.mtime_ns && ctime_ns == other.ctime_ns &&
             inode == other.inode && sha256 == other.sha256;
    }
  };

  // The record of `folder` (relative paths are taken from the working directory).
  static ShardVerificationRecord Load(const std::string& folder);

  // Whether shard `name` (a file name in the folder) was verified in exactly this state.
  bool Verified(const std::string& name, const FileState& state) const;

  // Keeps `name` in the record Save writes; the record then holds the kept shards only.
  void Keep(const std::string& name, const FileState& state);

  // Whether the kept shards differ from what Load found (a shard hashed now, or one no longer kept).
  bool changed() const;

  // Writes the kept shards beside them, else in the user cache folder. Returns the path written.
  // Errors: INTERNAL naming both places when neither can be written.
  StatusOr<std::string> Save() const;

  // The two places: the folder's record, and the user cache's ("" when there is no cache folder).
  std::string folder_record_path() const;
  std::string cache_record_path() const;

 private:
  std::string folder_;  // absolute
  std::map<std::string, FileState> in_folder_;  // as loaded from the folder's record
  std::map<std::string, FileState> in_cache_;   // as loaded from the user cache's
  std::map<std::string, FileState> kept_;
};

}  // namespace rung
