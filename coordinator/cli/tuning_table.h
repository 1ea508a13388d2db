// coordinator/cli/tuning_table.h
//
// A sweep's learning-rate search as `rung tune` prints it, and `rung run` at the end of a tuned
// sweep: per tuning cell the values tried with their metric or state, the best, bracketed or not and
// why, the next rung's predicted centre.
//   table  a line naming the search (key, anchor x ratio^i, state, cells, worst-case trials), then
//          the cells with numbers to 3 digits ("-" where there is none)
//   csv    the cells with exact numbers (blank where there is none)
//   json   one object per cell: cell, rung_label, status, tried [{value, loss, state}], best,
//          bracketed, reason, next_center (null where there is none)
#pragma once

#include <ostream>
#include <string>

#include "proto/rung.pb.h"

namespace rung::cli {

void PrintTuning(const rung::v1::GetTuningResponse& response, const std::string& format, std::ostream& out);

}  // namespace rung::cli
