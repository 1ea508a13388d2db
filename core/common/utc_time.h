// core/common/utc_time.h
//
// Times as rung prints and stores them for people: "2024-05-01 10:00:00Z" (UTC, seconds).
//
// Thread safety: reentrant.
#pragma once

#include <ctime>
#include <string>

namespace rung {

std::string UtcText(std::time_t seconds);  // "2024-05-01 10:00:00Z"
std::string UtcNow();                      // UtcText of now

}  // namespace rung
