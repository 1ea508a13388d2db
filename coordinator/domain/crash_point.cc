#include "coordinator/domain/crash_point.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace rung {

void CrashPoint(const char* name) {
  static const char* const armed = std::getenv("RUNG_CRASH_POINT");
  if (armed == nullptr || std::strcmp(armed, name) != 0) return;
  const std::string line = std::string("rung: crash point '") + name + "' reached: exiting\n";
  ssize_t written = write(STDERR_FILENO, line.data(), line.size());
  (void)written;
  _exit(kCrashPointExitCode);
}

}  // namespace rung
