// coordinator/cli/commands/cancel_command.cc
//
// `rung cancel SWEEP [--reason TEXT]`: every unfinished trial of a sweep CANCELLED
// (UserService.CancelSweep). Prints the sweep after the change as `rung sweeps` does (sweep_action.h).
#include "coordinator/client/command_registry.h"
#include "coordinator/cli/sweep_action.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

grpc::Status CancelSweep(CoordinatorConnection& connection, const SweepActionOptions& options, pb::Sweep* sweep) {
  pb::CancelSweepRequest request;
  request.set_sweep_id(options.sweep_id);
  request.set_reason(options.reason);
  return connection.user().CancelSweep(connection.Context().get(), request, sweep);
}

void AddCancelCommand(CLI::App& app, int* exit_code) {
  AddSweepActionCommand(app, exit_code, "cancel", "Cancel a sweep: every unfinished trial CANCELLED",
                        /*takes_reason=*/true, CancelSweep);
}

}  // namespace

RUNG_CLI_COMMAND("cancel", kSweeps, AddCancelCommand);

}  // namespace rung::cli
