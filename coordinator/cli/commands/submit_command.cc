// coordinator/cli/commands/submit_command.cc
//
// `rung submit SPEC [--dry-run]`: sends a sweep spec to the coordinator (UserService.SubmitSweep),
// which validates and expands it and stores its trials; resubmitting a spec skips the cells already
// SUCCEEDED and names what changed in each cell. --dry-run expands on the coordinator and stores
// nothing (the trial table). A spec over the coordinator's size limit is refused here, unsent
// (exit 2); spec errors come back as file:line:col (exit 2). --format json|csv: the response as JSON.
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_tables.h"
#include "coordinator/cli/text_table.h"
#include "core/config/yaml_document.h"
#include "proto/config_value.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct SubmitOptions {
  ConnectionOptions connection;
  std::string format = "table";
  std::string spec_path;
  bool dry_run = false;
};

// "submitted sweep 3: 12 trials, 12 to run (1.2e+15 FLOPs); 12 NEW", then each changed cell.
void PrintSubmission(const pb::SubmitSweepResponse& response) {
  std::map<std::string, int> outcomes;
  for (const pb::SubmittedCell& cell : response.cells()) {
    outcomes[EnumText(pb::SubmittedCell::Outcome_Name(cell.outcome()), "OUTCOME_")]++;
  }
  std::cout << (response.created() ? "submitted" : "resubmitted") << " sweep " << response.sweep_id() << ": "
            << response.trial_count() << " trials, " << response.new_trial_count() << " to run ("
            << Scientific(response.total_flops()) << " FLOPs)";
  for (const auto& [outcome, count] : outcomes) std::cout << "; " << count << " " << outcome;
  std::cout << "\n";
  for (const pb::SubmittedCell& cell : response.cells()) {
    if (cell.differences_size() == 0) continue;
    std::cout << "  cell " << cell.index() << " (" << cell.rung_label() << " "
              << wire::FromConfigEntries(cell.assignments()).dump() << ") changed:";
    for (const std::string& difference : cell.differences()) std::cout << " " << difference;
    std::cout << "\n";
  }
}

int RunSubmit(CoordinatorConnection& connection, const SubmitOptions& options) {
  // Bounded: a spec over the coordinator's size limit is refused here, before it is sent.
  StatusOr<std::string> text = ReadConfigText(options.spec_path);
  if (!text.ok()) {
    std::cerr << "rung submit: "
              << (text.status().code() == StatusCode::kNotFound ? "cannot read " + options.spec_path
                                                                : text.status().message())
              << "\n";
    return kUsage;
  }
  pb::SubmitSweepRequest request;
  request.set_spec_text(std::move(*text));
  request.set_spec_file_name(options.spec_path);
  request.set_dry_run(options.dry_run);
  pb::SubmitSweepResponse response;
  grpc::Status status = connection.user().SubmitSweep(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("submit", status);
  PrintSubmissionWarnings(response);
  if (options.format != "table") {
    std::cout << ToJson(response).dump(2) << "\n";
  } else if (options.dry_run) {
    PrintTrials({response.trials().begin(), response.trials().end()}, "table");
    std::cout << "\ndry run: " << response.trial_count() << " trials, nothing stored\n";
  } else {
    PrintSubmission(response);
  }
  return kOk;
}

void AddSubmitCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<SubmitOptions>();
  CLI::App* command = AddCommand<SubmitOptions>(
      app, exit_code, "submit",
      "Submit a sweep spec to the coordinator (validated there; resubmitting skips cells already SUCCEEDED)",
      options, RunSubmit);
  command->add_option("spec", options->spec_path, "Sweep spec (YAML)")->required();
  command->add_flag("--dry-run", options->dry_run, "Validate and expand on the coordinator; store nothing");
}

}  // namespace

RUNG_CLI_COMMAND("submit", kSweeps, AddSubmitCommand);

}  // namespace rung::cli
