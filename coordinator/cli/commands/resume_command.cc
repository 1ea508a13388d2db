// coordinator/cli/commands/resume_command.cc
//
// `rung resume SWEEP`: a paused sweep leases again (UserService.ResumeSweep). Prints the sweep after
// the change as `rung sweeps` does (sweep_action.h).
#include "coordinator/client/command_registry.h"
#include "coordinator/cli/sweep_action.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

grpc::Status ResumeSweep(CoordinatorConnection& connection, const SweepActionOptions& options, pb::Sweep* sweep) {
  pb::ResumeSweepRequest request;
  request.set_sweep_id(options.sweep_id);
  return connection.user().ResumeSweep(connection.Context().get(), request, sweep);
}

void AddResumeCommand(CLI::App& app, int* exit_code) {
  AddSweepActionCommand(app, exit_code, "resume", "Resume a paused sweep",
                        /*takes_reason=*/false, ResumeSweep);
}

}  // namespace

RUNG_CLI_COMMAND("resume", kSweeps, AddResumeCommand);

}  // namespace rung::cli
