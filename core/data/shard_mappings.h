// core/data/shard_mappings.h
//
// ShardMappings: read-only memory mappings of a list of shard files, at most `capacity` of them mapped
// at once. A file is mapped when it is asked for and not mapped; when that would make more than
// `capacity` mappings, the least recently used one is dropped. Every mapping takes one of the kernel's
// vm.max_map_count entries (65530 by default), so a folder of many small shards must not be mapped
// whole. A mapping handed out is shared: the set dropping it unmaps it only when its last holder lets
// go, so at most capacity + (callers holding one at that moment) files are mapped.
//
// A file mapped again is checked against the size it had when it was added (a shorter file would fault
// when read past its end).
//
// Example:
//   ShardMappings mappings(256);
//   RUNG_ASSIGN_OR_RETURN(auto mapped, ShardMappings::Map(path));   // load-time checks read `mapped`
//   const size_t index = mappings.Add(path, std::move(mapped));
//   ...
//   RUNG_ASSIGN_OR_RETURN(auto mapping, mappings.Get(index));        // from any thread
//
// Thread safety: Add is called before any Get, from one thread; Get and MappedCount may then be called
// concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung {

class ShardMappings {
 public:
  // One read-only mapping of a whole file, with what fstat said about the file when it was mapped.
  struct Mapping {
    Mapping() = default;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping();

    const unsigned char* data = nullptr;  // null for an empty file
    int64_t bytes = 0;
    int64_t mtime_ns = 0;  // modification time, nanoseconds since the epoch
    int64_t ctime_ns = 0;  // status change time (any write, rename or chmod; not settable), likewise
    uint64_t inode = 0;
  };

  // Maps `path` whole. Errors: NOT_FOUND if it cannot be opened; INTERNAL if it cannot be stat'ed or
  // mapped (the message carries the system's reason).
  static StatusOr<std::shared_ptr<const Mapping>> Map(const std::string& path);

  // REQUIRES: capacity >= 1.
  explicit ShardMappings(size_t capacity);
  ShardMappings(const ShardMappings&) = delete;
  ShardMappings& operator=(const ShardMappings&) = delete;

  // Adds a file the caller has just mapped (kept as the most recently used mapping, which may drop the
  // least recently used one); returns its index for Get.
  size_t Add(std::string path, std::shared_ptr<const Mapping> mapping);

  // File `index`'s mapping, mapped again if it was dropped. Errors: Map's, and DATA_LOSS if the file's
  // size is not the size it had when it was added. REQUIRES: index < the number of files added.
  StatusOr<std::shared_ptr<const Mapping>> Get(size_t index);

  // Mappings the set holds now (at most the capacity).
  size_t MappedCount() const;

 private:
  struct File {
    std::string path;
    int64_t bytes = 0;
    std::shared_ptr<const Mapping> mapping;     // null while not mapped
    std::list<size_t>::iterator recent;         // its place in recent_ while mapped
  };
  // Makes `index` the most recently used mapping and drops the least recently used beyond capacity.
  // REQUIRES: mutex_ held; files_[index].mapping set.
  void Touch(size_t index, bool is_new);

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<File> files_;
  std::list<size_t> recent_;  // mapped files' indexes, most recently used first
};

}  // namespace rung
