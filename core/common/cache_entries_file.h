// core/common/cache_entries_file.h
//
// The format of rung's files in the user's cache folder (user_cache_folder.h): the BLAS kernel verdicts
// (blas_kernel_cache.h) and rung validate's calibration (coordinator/cli/calibration_cache.h). One JSON
// document {"version": 1, "entries": [...]}, at most 1 MiB, replaced whole. What an entry holds and
// how a bad one is treated is each cache's own business.
//
// Thread safety: reentrant (files are replaced whole).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace rung {

// The entries of the cache file at `path`. Errors: NOT_FOUND when `path` is empty or there is no
// file; FAILED_PRECONDITION when it is unusable, with the reason ("larger than 1 MiB", the I/O error,
// or "not a rung <what> file (JSON {...})"; `what` e.g. "calibration").
StatusOr<nlohmann::json> ReadCacheEntries(const std::string& path, const std::string& what);

// Writes `entries` as the version-1 document at `path`, creating its folder, atomically
// (atomic_file.h). Errors: INTERNAL naming the folder or file.
Status WriteCacheEntries(const std::string& path, const nlohmann::json& entries);

}  // namespace rung
