// core/common/write_error.h
//
// The one way a failed write becomes a Status: a full disk or an exhausted quota (ENOSPC, EDQUOT) is
// RESOURCE_EXHAUSTED "no space left on device at PATH (while ACTION)", so that callers can tell a
// machine out of space (free some, then go on) from data that is unusable or an internal error; any
// other errno is INTERNAL "ACTION PATH: <strerror>" (a file past the size limit, EFBIG: RESOURCE_EXHAUSTED).
//
// Thread safety: a pure function.
#pragma once

#include <string>

#include "core/common/status.h"

namespace rung {

// How WriteError's message for a full disk starts; the path follows, then " (while ...".
inline constexpr char kNoSpaceMessage[] = "no space left on device at ";

// `action`: what was being done ("writing", "fsync of", "renaming"); `error_number`: the errno.
Status WriteError(const std::string& action, const std::string& path, int error_number);

}  // namespace rung
