// coordinator/cli/commands/pause_command.cc
//
// `rung pause SWEEP [--reason TEXT]`: no new leases for a sweep's trials (UserService.PauseSweep);
// running trials continue. Prints the sweep after the change as `rung sweeps` does (sweep_action.h).
#include "coordinator/client/command_registry.h"
#include "coordinator/cli/sweep_action.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

grpc::Status PauseSweep(CoordinatorConnection& connection, const SweepActionOptions& options, pb::Sweep* sweep) {
  pb::PauseSweepRequest request;
  request.set_sweep_id(options.sweep_id);
  request.set_reason(options.reason);
  return connection.user().PauseSweep(connection.Context().get(), request, sweep);
}

void AddPauseCommand(CLI::App& app, int* exit_code) {
  AddSweepActionCommand(app, exit_code, "pause", "Pause a sweep: no new leases; running trials continue",
                        /*takes_reason=*/true, PauseSweep);
}

}  // namespace

RUNG_CLI_COMMAND("pause", kSweeps, AddPauseCommand);

}  // namespace rung::cli
