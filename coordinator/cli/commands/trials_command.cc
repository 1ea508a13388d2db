// coordinator/cli/commands/trials_command.cc
//
// `rung trials SWEEP [--state S,...]`: a sweep's trials (UserService.ListTrials, every page; a row
// each, sweep_tables.h), optionally only those in some states (any case, comma-separated or
// repeated). An unknown state is exit 2, naming the states there are.
#include <cctype>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_fetch.h"
#include "coordinator/cli/sweep_tables.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct TrialsOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  std::vector<std::string> states;  // upper case
};

int RunTrials(CoordinatorConnection& connection, const TrialsOptions& options) {
  pb::ListTrialsRequest request;
  request.set_sweep_id(options.sweep_id);
  for (const std::string& state : options.states) {
    pb::TrialState value;
    if (!pb::TrialState_Parse("TRIAL_STATE_" + state, &value)) {
      std::cerr << "rung trials: unknown state '" << state
                << "' (PENDING, LEASED, RUNNING, SUCCEEDED, FAILED, PREEMPTED, STALE, CANCELLED)\n";
      return kUsage;
    }
    request.add_states(value);
  }
  std::vector<pb::Trial> trials;
  grpc::Status status = FetchTrials(connection, std::move(request), &trials);
  if (!status.ok()) return ReportRpcError("trials", status);
  PrintTrials(trials, options.format);
  return kOk;
}

void AddTrialsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<TrialsOptions>();
  CLI::App* command = AddCommand<TrialsOptions>(app, exit_code, "trials",
                                                "A sweep's trials (optionally in some states)", options, RunTrials);
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
  command->add_option("--state", options->states, "Only trials in these states, comma-separated (e.g. failed,cancelled)")
      ->delimiter(',')
      ->type_name("STATE,...")
      ->transform([](std::string state) {
        for (char& c : state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return state;
      });
}

}  // namespace

RUNG_CLI_COMMAND("trials", kSweeps, AddTrialsCommand);

}  // namespace rung::cli
