// coordinator/cli/sweep_commands.h
//
// The `rung` commands that talk to a coordinator over gRPC (never opening its database):
//   submit SPEC [--dry-run]      sweeps                      status SWEEP
//   trials SWEEP [--state S]     show TRIAL                  metrics TRIAL [--name N]
//   cancel|pause|resume SWEEP    retry SWEEP [--trial ID]    workers     params TRIAL
// Each prints a human table by default and --format json|csv for scripts; exit codes in
// exit_codes.h.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "coordinator/cli/coordinator_connection.h"

namespace rung::cli {

void AddSweepCommands(CLI::App& app, int* exit_code);

// Every trial of a sweep (all pages).
grpc::Status FetchTrials(CoordinatorConnection& connection, int64_t sweep_id, std::vector<rung::v1::Trial>* trials);

// The progress table of `rung status`: trials by state per rung x variant, compute done, throughput
// and ETA. `clear_screen` redraws in place (a terminal under --watch).
void PrintSweepStatus(const rung::v1::Sweep& sweep, const std::vector<rung::v1::Trial>& trials,
                      const std::string& format, bool clear_screen);

}  // namespace rung::cli
