#include "core/common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace rung {

Status WriteFileAtomically(const std::string& path, std::initializer_list<std::string_view> pieces) {
  const std::filesystem::path final_path(path);
  const std::string temporary =
      (final_path.parent_path() / ("." + final_path.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Internal("cannot create " + temporary + ": " + std::strerror(errno));
  auto fail = [&](const std::string& what) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return Status::Internal("cannot " + what + " " + temporary + ": " + std::strerror(error));
  };
  for (std::string_view piece : pieces) {
    const char* data = piece.data();
    size_t left = piece.size();
    while (left > 0) {
      const ssize_t written = ::write(fd, data, left);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) return fail("write");
      data += written;
      left -= static_cast<size_t>(written);
    }
  }
  if (::fsync(fd) != 0) return fail("flush");
  if (::close(fd) != 0) {
    ::unlink(temporary.c_str());
    return Status::Internal("cannot close " + temporary + ": " + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return Status::Internal("cannot rename " + temporary + " to " + path + ": " + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace rung
