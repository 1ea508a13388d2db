// coordinator/cli/commands/sweeps_command.cc
//
// `rung sweeps`: the coordinator's sweeps, one row each: id, name, state, trial counts and total
// 6ND (UserService.ListSweeps; sweep_tables.h).
#include <memory>
#include <string>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_tables.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct SweepsOptions {
  ConnectionOptions connection;
  std::string format = "table";
};

int RunSweeps(CoordinatorConnection& connection, const SweepsOptions& options) {
  pb::ListSweepsResponse response;
  grpc::Status status = connection.user().ListSweeps(connection.Context().get(), pb::ListSweepsRequest(), &response);
  if (!status.ok()) return ReportRpcError("sweeps", status);
  PrintSweeps({response.sweeps().begin(), response.sweeps().end()}, options.format);
  return kOk;
}

void AddSweepsCommand(CLI::App& app, int* exit_code) {
  AddCommand<SweepsOptions>(app, exit_code, "sweeps", "List the coordinator's sweeps",
                            std::make_shared<SweepsOptions>(), RunSweeps);
}

}  // namespace

RUNG_CLI_COMMAND("sweeps", kSweeps, AddSweepsCommand);

}  // namespace rung::cli
