// coordinator/cli/commands/precision_command.cc
//
// `rung precision SWEEP`: a precision-aimed sweep's intervals against its target (UserService.
// GetPrecision), as precision_table.h prints them: each variant's multiplier at each target rung, its
// half width against the target and expected once the running trials end, the seeds the aim adds
// next, the FLOPs planned against the budget, and how the aim closed.
#include <iostream>
#include <memory>
#include <string>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/precision_table.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct PrecisionOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
};

int RunPrecision(CoordinatorConnection& connection, const PrecisionOptions& options) {
  pb::GetPrecisionRequest request;
  request.set_sweep_id(options.sweep_id);
  pb::GetPrecisionResponse response;
  grpc::Status status = connection.user().GetPrecision(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("precision", status);
  PrintPrecision(response, options.format, std::cout);
  return kOk;
}

void AddPrecisionCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<PrecisionOptions>();
  CLI::App* command = AddCommand<PrecisionOptions>(
      app, exit_code, "precision",
      "A precision-aimed sweep (its spec's precision block): each variant's compute multiplier at each\n"
      "target rung with its interval, the half width against the target and the half width expected once\n"
      "the running trials end, the seeds the coordinator adds next, the FLOPs planned against the budget,\n"
      "and how the aim closed (met, budget, no_fit). --format json: one object with the header's fields,\n"
      "rows [...] and next [...].",
      options, RunPrecision);
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
}

}  // namespace

RUNG_CLI_COMMAND("precision", kResults, AddPrecisionCommand);

}  // namespace rung::cli
