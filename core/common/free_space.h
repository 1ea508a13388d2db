// core/common/free_space.h
//
// The free bytes of the file system a path is on (what an unprivileged writer may still use), probed
// at the path's nearest existing ancestor, so a folder not made yet is measured where it will be.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.h"

namespace rung {

// Errors: INTERNAL when no ancestor of `path` can be probed.
StatusOr<uint64_t> FreeBytesAt(const std::string& path);

}  // namespace rung
