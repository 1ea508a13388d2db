// coordinator/cli/commands/metrics_command.cc
//
// `rung metrics TRIAL [--name N,...]`: a trial's metric series (UserService.GetMetrics), each step
// from the newest attempt that reported it: name, step, value, tokens, FLOPs, wall time, attempt.
// --name of a metric no trial of the sweep reported is exit 2, naming the ones there are.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct MetricsOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t trial_id = 0;
  std::vector<std::string> names;
};

int RunMetrics(CoordinatorConnection& connection, const MetricsOptions& options) {
  pb::GetMetricsRequest request;
  request.set_trial_id(options.trial_id);
  for (const std::string& name : options.names) request.add_names(name);
  pb::GetMetricsResponse response;
  grpc::Status status = connection.user().GetMetrics(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("metrics", status);
  const bool exact = options.format == "csv";
  TextTable table({"name", "step", "value", "tokens", "flops", "wall_time", "attempt"});
  for (const pb::MetricSeries& series : response.series()) {
    for (const pb::MetricPoint& point : series.points()) {
      nlohmann::json row = {{"name", series.name()},   {"step", point.step()},   {"value", point.value()},
                            {"tokens", point.tokens()}, {"flops", point.flops()}, {"wall_time", point.wall_time()},
                            {"attempt", point.attempt()}};
      table.AddRow({series.name(), std::to_string(point.step()),
                    exact ? ExactNumber(point.value()) : Number(point.value(), 6), std::to_string(point.tokens()),
                    exact ? ExactNumber(point.flops()) : Scientific(point.flops()),
                    exact ? ExactNumber(point.wall_time()) : Number(point.wall_time()),
                    std::to_string(point.attempt())},
                   row);
    }
  }
  table.Print(std::cout, options.format);
  return kOk;
}

void AddMetricsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<MetricsOptions>();
  CLI::App* command = AddCommand<MetricsOptions>(
      app, exit_code, "metrics", "A trial's metric series (each step from the newest attempt that reported it)",
      options, RunMetrics);
  command->add_option("trial", options->trial_id, "Trial id")->required();
  command->add_option("--name", options->names, "Only these metrics, comma-separated (e.g. val_loss,train_loss)")
      ->delimiter(',')
      ->type_name("NAME,...");
}

}  // namespace

RUNG_CLI_COMMAND("metrics", kSweeps, AddMetricsCommand);

}  // namespace rung::cli
