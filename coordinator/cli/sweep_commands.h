// coordinator/cli/sweep_commands.h
//
// The `rung` commands that talk to a coordinator over gRPC (never opening its database):
//   submit SPEC [--dry-run]      sweeps                      status SWEEP
//   trials SWEEP [--state S]     show TRIAL                  metrics TRIAL [--name N]
//   cancel|pause|resume SWEEP    retry SWEEP [--trial ID]    workers     params TRIAL
// Each prints a human table by default and --format json|csv for scripts (CSV with exact numbers,
// the table rounded); exit codes in exit_codes.h. List options (--state, --name, --trial) take
// their values comma-separated or repeated; --state any case. `status --watch` clears the screen
// between refreshes only when stdout is a terminal. `metrics --name` of a metric no trial of the
// sweep reported is exit 2, naming the ones there are.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "coordinator/cli/command_support.h"

namespace rung::cli {

void AddSweepCommands(CLI::App& app, int* exit_code);

// Every trial of a sweep (all pages).
grpc::Status FetchTrials(CoordinatorConnection& connection, int64_t sweep_id, std::vector<rung::v1::Trial>* trials);

// The coordinator's clock now (ServerInfo.server_time), in seconds since the Unix epoch: what
// elapsed times and ETAs are measured against, whatever this machine's clock says; and, when
// `storage_warning` is given, ServerInfo.storage_warning ("" while its database has room).
grpc::Status FetchServerTime(CoordinatorConnection& connection, double* seconds,
                             std::string* storage_warning = nullptr);

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
SweepProgress MeasureProgress(const rung::v1::Sweep& sweep, const std::vector<rung::v1::Trial>& trials,
                              double now_seconds, double search_flops = 0);

// The 6ND its search may still add to a sweep whose search is open (its worst case, max_points values
// per cell, less the trials it has): 0 for other sweeps, and when the coordinator does not say.
double SearchFlopsToCome(CoordinatorConnection& connection, const rung::v1::Sweep& sweep);

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
