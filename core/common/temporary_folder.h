// core/common/temporary_folder.h
//
// A folder of its own under the system's temporary directory (mkdtemp), removed with its contents when
// the object goes: for files a child process writes and the caller reads back.
//
// Thread safety: one owner; distinct objects are distinct folders.
#pragma once

#include <string>

#include "core/common/status.h"

namespace rung {

class TemporaryFolder {
 public:
  // A new folder named `prefix` plus six random characters. INTERNAL where it cannot be made.
  static StatusOr<TemporaryFolder> Make(const std::string& prefix);
  TemporaryFolder(TemporaryFolder&& other) noexcept;
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(TemporaryFolder&&) = delete;
  ~TemporaryFolder();

  const std::string& path() const { return path_; }
  // The path of `name` inside it.
  std::string File(const std::string& name) const;

 private:
  explicit TemporaryFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace rung
