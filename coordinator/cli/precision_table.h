// coordinator/cli/precision_table.h
//
// A sweep's precision aim as `rung precision` prints it (and `rung run` at the end of an aimed sweep):
//   table  a header (estimator, level, baseline, target; FLOPs planned against the budget; the state
//          and why), then one row per target interval: multiplier, interval, half width against the
//          target, the half width expected once the running trials end, seeds, met; then the seeds the
//          aim adds next, how it closed, and how the intervals were made
//   csv    the rows with exact numbers (blank where there is none)
//   json   one object: the header's fields, rows [...] and next [...] (null where there is none)
#pragma once

#include <ostream>
#include <string>

#include "proto/rung.pb.h"

namespace rung::cli {

void PrintPrecision(const rung::v1::GetPrecisionResponse& response, const std::string& format, std::ostream& out);

}  // namespace rung::cli
