// core/common/user_cache_folder.h
//
// Where rung keeps what it measured about this machine for later runs (the BLAS kernel verdicts,
// rung validate's calibration): $XDG_CACHE_HOME/rung when XDG_CACHE_HOME is an absolute path, else
// $HOME/.cache/rung, else "" (no cache: callers measure again and say so).
//
// Thread safety: reads the environment; reentrant.
#pragma once

#include <string>

namespace rung {

std::string UserCacheFolder();

}  // namespace rung
