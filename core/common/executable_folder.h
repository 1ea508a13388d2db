// core/common/executable_folder.h
//
// The folder of the running executable (build/bin, or an install's bin/), where rung's programs
// find each other (rung-train beside rung-worker, the dashboard's page beside rung) and the
// builtin corpus.
//
// Thread safety: reentrant.
#pragma once

#include <string>

namespace rung {

// The folder of /proc/self/exe; "" when it cannot be read.
std::string ExecutableFolder();

}  // namespace rung
