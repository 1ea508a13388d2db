// coordinator/cli/text_table.h
//
// The CLI's tables (core/common/text_table.h: aligned text, CSV, JSON) and the number helpers its
// commands print with.
#pragma once

#include <string>

#include "core/common/text_table.h"

namespace rung::cli {

using ::rung::TextTable;

// 18874368 -> "18.87M"; 1.2e15 -> "1.20e+15" style helpers for people.
std::string HumanCount(double value);
std::string Scientific(double value, int digits = 3);
std::string HumanDuration(double seconds);

}  // namespace rung::cli
