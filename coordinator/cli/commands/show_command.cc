// coordinator/cli/commands/show_command.cc
//
// `rung show TRIAL`: one trial in full (UserService.GetTrial): its row as `rung trials` prints it,
// its attempts (worker, times, metric batches, why each ended), identity, N, tokens, FLOPs,
// checkpoint folder and resolved config. --format json: the trial message; --format csv: one row,
// the columns of `rung trials` and then identity, counts, checkpoint folder and config (as JSON).
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_tables.h"
#include "coordinator/cli/text_table.h"
#include "proto/config_value.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct ShowOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t trial_id = 0;
};

void PrintTrialCsv(const pb::Trial& trial) {
  TextTable table({"trial", "index", "rung", "cell", "state", "attempt", "step", "metric", "worker", "reason",
                   "identity", "parameters_nonembedding", "parameters_total", "tokens", "flops", "checkpoint_dir",
                   "config"});
  const std::string metric = trial.has_final_metric()    ? ExactNumber(trial.final_metric())
                             : trial.has_latest_metric() ? ExactNumber(trial.latest_metric())
                                                         : "";
  const nlohmann::json config = wire::FromConfigObject(trial.config());
  table.AddRow({std::to_string(trial.trial_id()), std::to_string(trial.index()), trial.rung_label(),
                CellText(trial.assignments()), TrialStateName(trial.state()), std::to_string(trial.attempt()),
                std::to_string(trial.latest_step()) + "/" + std::to_string(trial.total_steps()), metric,
                trial.worker_id(), trial.state_reason(), trial.identity(),
                std::to_string(trial.parameters_nonembedding()), std::to_string(trial.parameters_total()),
                std::to_string(trial.tokens()), ExactNumber(trial.flops()), trial.checkpoint_dir(), config.dump()});
  table.PrintCsv(std::cout);
}

void PrintTrialText(const pb::Trial& trial) {
  PrintTrials({trial}, "table");
  if (trial.attempts_size() > 0) {
    TextTable attempts({"attempt", "state", "worker", "leased", "started", "ended", "batches", "reason"});
    for (const pb::TrialAttempt& attempt : trial.attempts()) {
      attempts.AddRow({std::to_string(attempt.attempt()), TrialStateName(attempt.state()), attempt.worker_id(),
                       UtcTime(attempt.leased_at()), UtcTime(attempt.started_at()), UtcTime(attempt.ended_at()),
                       std::to_string(attempt.metric_batches()), attempt.exit_reason()});
    }
    std::cout << "\n";
    attempts.PrintText(std::cout);
  }
  std::cout << "\nidentity " << trial.identity() << "\nN " << HumanCount(trial.parameters_nonembedding())
            << " non-embedding, " << HumanCount(trial.parameters_total()) << " total; " << HumanCount(trial.tokens())
            << " tokens; " << Scientific(trial.flops()) << " FLOPs\n"
            << "checkpoints " << trial.checkpoint_dir() << "\nconfig "
            << wire::FromConfigObject(trial.config()).dump(2) << "\n";
}

int RunShow(CoordinatorConnection& connection, const ShowOptions& options) {
  pb::GetTrialRequest request;
  request.set_trial_id(options.trial_id);
  pb::Trial trial;
  grpc::Status status = connection.user().GetTrial(connection.Context().get(), request, &trial);
  if (!status.ok()) return ReportRpcError("show", status);
  if (options.format == "json") {
    std::cout << ToJson(trial).dump(2) << "\n";
  } else if (options.format == "csv") {
    PrintTrialCsv(trial);
  } else {
    PrintTrialText(trial);
  }
  return kOk;
}

void AddShowCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* command = AddCommand<ShowOptions>(app, exit_code, "show", "One trial in full: config, state, attempt",
                                              options, RunShow);
  command->add_option("trial", options->trial_id, "Trial id")->required();
}

}  // namespace

RUNG_CLI_COMMAND("show", kSweeps, AddShowCommand);

}  // namespace rung::cli
