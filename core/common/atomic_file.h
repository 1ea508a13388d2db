// core/common/atomic_file.h
//
// Files that appear whole or not at all: written to a hidden temporary name in the same folder
// (".NAME.tmp-PID"), flushed to disk, then renamed over NAME. A killed writer leaves at most a
// temporary file, never a partial file under its final name.
//
// Thread safety: reentrant (distinct paths).
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"

namespace rung {

// Writes `pieces` in order as `path`. Errors: INTERNAL naming the path when the write, flush or rename fails.
Status WriteFileAtomically(const std::string& path, std::initializer_list<std::string_view> pieces);

}  // namespace rung
