// core/common/token_file.cc
#include "core/common/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/common/trim_whitespace.h"

namespace rung {
namespace {

constexpr size_t kMinTokenLength = 16;
constexpr size_t kMaxTokenFileBytes = 4096;

bool IsTokenCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-._~+/=", c) != nullptr;
}

}  // namespace

StatusOr<std::string> ReadBearerTokenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("token file " + path + " does not exist");
    return Status::FailedPrecondition("cannot open token file " + path + ": " + std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::FailedPrecondition("token file " + path + " is not a regular file");
  }
  if ((info.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Status::FailedPrecondition("token file " + path + " has mode " + mode +
                                      ": group and others must have no access; run `chmod 600 " + path + "`");
  }
  std::string content(kMaxTokenFileBytes + 1, '\0');
  size_t size = 0;
  while (size < content.size()) {
    const ssize_t got = ::read(fd, content.data() + size, content.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    size += static_cast<size_t>(got);
  }
  ::close(fd);
  if (size > kMaxTokenFileBytes) return Status::InvalidArgument("token file " + path + " is too large to hold a token");
  const std::string_view token = TrimWhitespace(std::string_view(content.data(), size));
  if (token.empty()) return Status::InvalidArgument("token file " + path + " is empty");
  if (token.size() < kMinTokenLength) {
    return Status::InvalidArgument("the token in " + path + " is shorter than " + std::to_string(kMinTokenLength) +
                                   " characters; use a random one (e.g. `openssl rand -hex 32`)");
  }
  for (char c : token) {
    if (!IsTokenCharacter(c)) {
      return Status::InvalidArgument("the token in " + path +
                                     " has a character outside [A-Za-z0-9-._~+/=] (one token, on one line)");
    }
  }
  return std::string(token);
}

}  // namespace rung
