// coordinator/cli/sweep_status.h
//
// A sweep's progress as `rung status` and `rung run` print it: trials by state per rung x variant,
// compute done and left, throughput and ETA, measured against the coordinator's clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proto/rung.pb.h"

namespace rung::cli {

// A sweep's progress at `now_seconds`: compute done, left and how fast it goes.
struct SweepProgress {
  bool finished = false;        // SUCCEEDED, FAILED or CANCELLED
  double elapsed_seconds = 0;   // from creation to now (or to the end, once finished)
  double remaining_flops = 0;   // 6ND of the trials still to run (PENDING, LEASED, RUNNING, PREEMPTED, STALE)
  std::optional<double> flops_per_second;  // finished compute over elapsed time; unset before any finished
  std::optional<double> eta_seconds;       // remaining compute at that rate; unset when unknown or finished
};
// `search_flops`: compute a tuned sweep's open search may still add (SearchFlopsToCome), counted as
// remaining: progress and ETA show the worst case.
// Whether the sweep has ended: succeeded, failed or cancelled.
bool SweepFinished(const rung::v1::Sweep& sweep);

SweepProgress MeasureProgress(const rung::v1::Sweep& sweep, const std::vector<rung::v1::Trial>& trials,
                              double now_seconds, double search_flops = 0);

// The progress of `rung status`: trials by state per rung x variant (PREEMPTED, STALE and
// EARLY_STOPPED columns only when some trial is in them), compute done, throughput and ETA at
// `now_seconds` (with an open search, the worst case: `search_flops` to come).
//   table  the sweep's state and counts, the table, then "compute X of Y FLOPs (6ND) in T; R FLOP/s,
//          ETA E"; `clear_screen` first clears the terminal (only for a terminal under --watch)
//   json   one object: sweep_id, name, state, state_reason, counts, total_flops, finished_flops,
//          remaining_flops, elapsed_seconds, flops_per_second and eta_seconds (null when unknown),
//          rows (rung, variant, a count per state)
//   csv    the rows, each also with sweep, sweep_state, finished_flops, remaining_flops,
//          elapsed_seconds, flops_per_second and eta_seconds (empty when unknown)
void PrintSweepStatus(const rung::v1::Sweep& sweep, const std::vector<rung::v1::Trial>& trials, double now_seconds,
                      const std::string& format, bool clear_screen, double search_flops = 0);

}  // namespace rung::cli
