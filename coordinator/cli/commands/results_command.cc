// coordinator/cli/commands/results_command.cc
//
// `rung results SWEEP [--group-by K,..] [--metric M] [--agg mean,std,min,max,median,count]
//              [--summary final|best|last] [--where KEY=VALUE]...`: a results table
// (UserService.QueryResults): trials grouped by keys (trial, rung_label, rung, seed, a sweep axis, any
// dotted key of the trial config; without --group-by one row per trial, labelled by trial,
// rung_label and the sweep's axes), one value of the metric per trial aggregated per group, and the
// paired same-seed difference against the sweep's baseline. An undefined aggregate (the std of one
// value, anything of no value; paired_sd of one pair) is blank in the table and CSV and null in
// JSON. An unknown metric or key is exit 2, naming what there is. --where takes its values as JSON
// (which has commas of its own), so it is repeated rather than comma-separated.
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"
#include "proto/config_value.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;
using nlohmann::json;

struct ResultsOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  std::vector<std::string> group_by;
  std::string metric;
  std::vector<std::string> aggregations = {"mean", "std", "min", "count"};
  std::string summary = "final";
  std::vector<std::string> where;
};

int RunResults(CoordinatorConnection& connection, const ResultsOptions& options) {
  pb::QueryResultsRequest request;
  request.set_sweep_id(options.sweep_id);
  for (const std::string& key : options.group_by) request.add_group_by(key);
  request.set_metric(options.metric);
  static const std::map<std::string, pb::MetricSummary> summaries = {
      {"final", pb::METRIC_SUMMARY_FINAL}, {"best", pb::METRIC_SUMMARY_BEST}, {"last", pb::METRIC_SUMMARY_LAST}};
  request.set_summary(summaries.at(options.summary));
  static const std::map<std::string, pb::Aggregation> aggregations = {
      {"mean", pb::AGGREGATION_MEAN}, {"std", pb::AGGREGATION_STD},       {"min", pb::AGGREGATION_MIN},
      {"max", pb::AGGREGATION_MAX},   {"median", pb::AGGREGATION_MEDIAN}, {"count", pb::AGGREGATION_COUNT}};
  for (const std::string& name : options.aggregations) request.add_aggregations(aggregations.at(name));
  for (const std::string& condition : options.where) {
    const size_t equals = condition.find('=');
    if (equals == std::string::npos || equals == 0) {
      std::cerr << "rung results: --where '" << condition << "': expected KEY=VALUE (e.g. position.variant=rope)\n";
      return kUsage;
    }
    pb::ResultFilter* filter = request.add_filters();
    filter->set_key(condition.substr(0, equals));
    const std::string value = condition.substr(equals + 1);
    json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
    *filter->mutable_value() = wire::ToConfigValue(parsed.is_discarded() ? json(value) : parsed);  // rope -> "rope"
  }
  pb::QueryResultsResponse response;
  grpc::Status status = connection.user().QueryResults(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("results", status);

  std::vector<std::string> columns(response.group_by().begin(), response.group_by().end());
  for (const std::string& name : options.aggregations) columns.push_back(name);
  for (const char* column : {"trials", "paired_diff", "paired_sd", "pairs"}) columns.push_back(column);
  TextTable table(columns);
  for (const pb::ResultRow& row : response.rows()) {
    std::vector<std::string> cells;
    json object = json::object();
    for (int i = 0; i < row.group_values_size(); ++i) {
      json value = wire::FromConfigValue(row.group_values(i));
      cells.push_back(ValueText(value));
      object[response.group_by(i)] = value;
    }
    for (int i = 0; i < row.values_size(); ++i) {
      const bool count = response.aggregations(i) == pb::AGGREGATION_COUNT;
      // Undefined values (NaN: the sd of one value, anything of none) are blank, and null in JSON.
      cells.push_back(count ? std::to_string(static_cast<int64_t>(row.values(i))) : NumberOrBlank(row.values(i), 5));
      object[options.aggregations[static_cast<size_t>(i)]] =
          count ? json(static_cast<int64_t>(row.values(i))) : NumberOrNull(row.values(i));
    }
    // The sd of one pair is undefined too (the server sends 0 for it).
    const bool paired_sd = row.has_paired_difference_sd() && row.pairs() >= 2;
    cells.push_back(std::to_string(row.trials()));
    cells.push_back(row.has_paired_difference_mean() ? NumberOrBlank(row.paired_difference_mean(), 4) : "");
    cells.push_back(paired_sd ? NumberOrBlank(row.paired_difference_sd(), 4) : "");
    cells.push_back(std::to_string(row.pairs()));
    object["trials"] = row.trials();
    object["paired_diff"] = row.has_paired_difference_mean() ? NumberOrNull(row.paired_difference_mean()) : json();
    object["paired_sd"] = paired_sd ? NumberOrNull(row.paired_difference_sd()) : json();
    object["pairs"] = row.pairs();
    object["flops"] = row.flops();
    object["tokens"] = row.tokens();
    object["trial_ids"] = std::vector<int64_t>(row.trial_ids().begin(), row.trial_ids().end());
    table.AddRow(cells, object);
  }
  if (options.format == "table") {
    std::cout << "sweep " << options.sweep_id << ": " << response.metric() << " ("
              << options.summary << " value per trial); paired_diff: mean same-seed difference against the "
              << "baseline " << wire::FromConfigEntries(response.baseline()).dump() << " (sd over pairs)\n\n";
  }
  table.Print(std::cout, options.format);
  return kOk;
}

void AddResultsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ResultsOptions>();
  CLI::App* command = AddCommand<ResultsOptions>(
      app, exit_code, "results",
      "A sweep's results table: trials grouped by --group-by keys, one value of the metric per trial, aggregated\n"
      "per group (over seeds), with the mean same-seed difference against the sweep's baseline (paired_diff:\n"
      "each trial minus the baseline trial with the same rung, seed and other axis values).",
      options, RunResults);
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
  command
      ->add_option("--group-by", options->group_by,
                   "Keys, comma-separated: rung_label, rung, seed, a sweep axis (position.variant) or any dotted key "
                   "of the trial config (train.lr); without it: one row per trial, labelled by its axes")
      ->delimiter(',')
      ->type_name("KEY,...");
  command->add_option("--metric", options->metric, "The metric (default: the sweep's, e.g. val_loss)")
      ->type_name("NAME");
  command->add_option("--agg", options->aggregations, "Aggregations, comma-separated: mean,std,min,max,median,count")
      ->delimiter(',')
      ->check(CLI::IsMember({"mean", "std", "min", "max", "median", "count"}))
      ->type_name("AGG,...");
  command
      ->add_option("--summary", options->summary,
                   "Which value stands for a trial: final (its final record; SUCCEEDED trials), best, last")
      ->check(CLI::IsMember({"final", "best", "last"}));
  command->add_option("--where", options->where, "Only trials with KEY=VALUE (VALUE as JSON, or a string)")
      ->type_name("KEY=VALUE");
}

}  // namespace

RUNG_CLI_COMMAND("results", kResults, AddResultsCommand);

}  // namespace rung::cli
