// coordinator/cli/sweep_action.h
//
// The shape `rung cancel`, `pause` and `resume` share: a sweep id, an optional --reason (recorded
// with the sweep's event), one RPC that returns the sweep after the change, printed as `rung sweeps`
// prints a sweep (sweep_tables.h). Each command's file says which RPC.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "coordinator/cli/command_support.h"

namespace rung::cli {

struct SweepActionOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  std::string reason;
};

// The RPC of an action: the request made from `options`, the sweep after the change in `sweep`.
using SweepActionCall =
    std::function<grpc::Status(CoordinatorConnection& connection, const SweepActionOptions& options, rung::v1::Sweep* sweep)>;

// Registers subcommand `name`: SWEEP, --reason when `takes_reason`, --format and the connection options.
void AddSweepActionCommand(CLI::App& app, int* exit_code, const std::string& name, const std::string& help,
                           bool takes_reason, SweepActionCall call);

}  // namespace rung::cli
