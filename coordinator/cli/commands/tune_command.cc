// coordinator/cli/commands/tune_command.cc
//
// `rung tune SWEEP`: the sweep's learning-rate search (UserService.GetTuning), as tuning_table.h
// prints it: per tuning cell the values tried, their metric and state, the best, bracketed or not
// and why, the next rung's predicted centre.
#include <iostream>
#include <memory>
#include <string>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/tuning_table.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct TuneOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
};

int RunTune(CoordinatorConnection& connection, const TuneOptions& options) {
  pb::GetTuningRequest request;
  request.set_sweep_id(options.sweep_id);
  pb::GetTuningResponse response;
  grpc::Status status = connection.user().GetTuning(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("tune", status);
  PrintTuning(response, options.format, std::cout);
  return kOk;
}

void AddTuneCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App* command = AddCommand<TuneOptions>(
      app, exit_code, "tune",
      "A sweep's learning-rate search (its spec's tune block): per tuning cell the values tried with their\n"
      "metric and state, the best, whether it is bracketed and why, and the next rung's predicted centre.\n"
      "--format json: one object per cell (cell, rung_label, status, tried [{value, loss, state}], best,\n"
      "bracketed, reason, next_center).",
      options, RunTune);
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
}

}  // namespace

RUNG_CLI_COMMAND("tune", kResults, AddTuneCommand);

}  // namespace rung::cli
