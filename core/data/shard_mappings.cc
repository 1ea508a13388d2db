#include "core/data/shard_mappings.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rung {

ShardMappings::Mapping::~Mapping() {
  if (data != nullptr) ::munmap(const_cast<unsigned char*>(data), static_cast<size_t>(bytes));
}

StatusOr<std::shared_ptr<const ShardMappings::Mapping>> ShardMappings::Map(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open shard " + path + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return Status::Internal("cannot stat shard " + path + ": " + std::strerror(error));
  }
  auto mapping = std::make_shared<Mapping>();
  mapping->bytes = static_cast<int64_t>(info.st_size);
  mapping->mtime_ns = static_cast<int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  mapping->ctime_ns = static_cast<int64_t>(info.st_ctim.tv_sec) * 1'000'000'000 + info.st_ctim.tv_nsec;
  mapping->inode = static_cast<uint64_t>(info.st_ino);
  if (mapping->bytes > 0) {
    void* mapped = ::mmap(nullptr, static_cast<size_t>(mapping->bytes), PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      return Status::Internal("cannot mmap shard " + path + ": " + std::strerror(error));
    }
    mapping->data = static_cast<const unsigned char*>(mapped);
  }
  ::close(fd);
  return std::shared_ptr<const Mapping>(std::move(mapping));
}

ShardMappings::ShardMappings(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

size_t ShardMappings::Add(std::string path, std::shared_ptr<const Mapping> mapping) {
  std::lock_guard<std::mutex> lock(mutex_);
  File file;
  file.path = std::move(path);
  file.bytes = mapping->bytes;
  file.mapping = std::move(mapping);
  files_.push_back(std::move(file));
  Touch(files_.size() - 1, /*is_new=*/true);
  return files_.size() - 1;
}

StatusOr<std::shared_ptr<const ShardMappings::Mapping>> ShardMappings::Get(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  File& file = files_[index];
  if (file.mapping != nullptr) {
    Touch(index, /*is_new=*/false);
    return file.mapping;
  }
  RUNG_ASSIGN_OR_RETURN(std::shared_ptr<const Mapping> mapping, Map(file.path));
  if (mapping->bytes != file.bytes) {
    return Status::DataLoss("shard " + file.path + " has " + std::to_string(mapping->bytes) + " bytes, but had " +
                            std::to_string(file.bytes) + " when it was opened (changed while in use)");
  }
  file.mapping = std::move(mapping);
  Touch(index, /*is_new=*/true);
  return file.mapping;
}

size_t ShardMappings::MappedCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recent_.size();
}

void ShardMappings::Touch(size_t index, bool is_new) {
  File& file = files_[index];
  if (is_new) {
    recent_.push_front(index);
  } else {
    recent_.splice(recent_.begin(), recent_, file.recent);
  }
  file.recent = recent_.begin();
  while (recent_.size() > capacity_) {
    files_[recent_.back()].mapping.reset();
    recent_.pop_back();
  }
}

}  // namespace rung
