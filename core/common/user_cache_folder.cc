#include "core/common/user_cache_folder.h"

#include <cstdlib>

namespace rung {

std::string UserCacheFolder() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && cache[0] == '/') return std::string(cache) + "/rung";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/rung";
  return "";
}

}  // namespace rung
