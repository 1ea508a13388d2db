// coordinator/cli/commands/retry_command.cc
//
// `rung retry SWEEP [--trial ID,...] [--reason TEXT]`: puts FAILED trials back in the queue as
// PENDING, all of a sweep's or only the named ones (UserService.RetryTrials), and says how many and
// the sweep's state after. --format json|csv: the response as JSON.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_tables.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct RetryOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  std::vector<int64_t> trial_ids;  // empty: every FAILED trial
  std::string reason;
};

int RunRetry(CoordinatorConnection& connection, const RetryOptions& options) {
  pb::RetryTrialsRequest request;
  request.set_sweep_id(options.sweep_id);
  for (int64_t id : options.trial_ids) request.add_trial_ids(id);
  request.set_reason(options.reason);
  pb::RetryTrialsResponse response;
  grpc::Status status = connection.user().RetryTrials(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("retry", status);
  if (options.format != "table") {
    std::cout << ToJson(response).dump(2) << "\n";
  } else {
    std::cout << response.retried_trial_ids_size() << " trial(s) back to PENDING; sweep "
              << SweepStateName(response.sweep().state()) << "\n";
  }
  return kOk;
}

void AddRetryCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<RetryOptions>();
  CLI::App* command = AddCommand<RetryOptions>(
      app, exit_code, "retry", "Put FAILED trials back in the queue (all of a sweep's, or --trial ones)", options,
      RunRetry);
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
  command->add_option("--trial", options->trial_ids, "Only these trials, comma-separated")
      ->delimiter(',')
      ->type_name("TRIAL,...");
  command->add_option("--reason", options->reason, "Why (recorded with the event)");
}

}  // namespace

RUNG_CLI_COMMAND("retry", kSweeps, AddRetryCommand);

}  // namespace rung::cli
