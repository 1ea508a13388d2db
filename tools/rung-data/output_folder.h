// tools/rung-data/output_folder.h
//
// The --out folder of a rung-data command, checked before any input is read: it must be a folder or
// not exist yet, below folders (not a file standing where a folder has to be created).
//
// Thread safety: reentrant (reads the file system).
#pragma once

#include <string>

#include "core/common/status.h"

namespace rung::data_tool {

// INVALID_ARGUMENT when `out` is empty, or it or a folder above it exists and is not a folder (naming
// which).
Status CheckOutputFolder(const std::string& out);

}  // namespace rung::data_tool
