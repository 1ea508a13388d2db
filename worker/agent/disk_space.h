// worker/agent/disk_space.h
//
// What the agent needs to stop leasing while its disk is full (a trainer exited kTrainerExitNoSpace):
// the folder a trainer's "no space left on device at PATH" names, and the free bytes of the file
// system a path is on.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/common/free_space.h"
#include "core/common/status.h"

namespace rung::agent {

// Leasing resumes once the full file system has this much free (and, for a small one, once it is
// no longer full: see EnoughSpaceToLease).
inline constexpr uint64_t kMinFreeBytesToLease = uint64_t{64} << 20;

// The folder of the path in "no space left on device at PATH (while ...)" (core/common/write_error.h)
// found in `text`; nullopt when `text` holds no such message.
std::optional<std::string> NoSpaceFolder(const std::string& text);

// Whether a worker whose disk was full at `folder` may lease again: at least kMinFreeBytesToLease free.
bool EnoughSpaceToLease(const std::string& folder);

}  // namespace rung::agent
