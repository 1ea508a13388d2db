#include "core/common/write_error.h"

#include <cerrno>
#include <cstring>

namespace rung {

Status WriteError(const std::string& action, const std::string& path, int error_number) {
  if (error_number == ENOSPC || error_number == EDQUOT) {
    return Status::ResourceExhausted(std::string(kNoSpaceMessage) + path + " (while " + action + " it: " +
                                     std::strerror(error_number) + ")");
  }
  if (error_number == EFBIG) return Status::ResourceExhausted(action + " " + path + ": " + std::strerror(error_number));
  return Status::Internal(action + " " + path + ": " + std::strerror(error_number));
}

}  // namespace rung
