// coordinator/cli/commands/results_command.cc
//
// `rung results SWEEP [--group-by K,..] [--metric M] [--agg mean,std,min,max,median,count]
//              [--summary final|best|last] [--where KEY=VALUE]... [--against KEY=VALUE]...
//              [--pair-on K,..] [--level P]`: a results table
// (UserService.QueryResults): trials grouped by keys (trial, rung_label, rung, seed, a sweep axis, any
// dotted key of the trial config; without --group-by one row per trial, labelled by trial,
// rung_label and the sweep's axes), one value of the metric per trial aggregated per group, and the
// paired same-seed difference against the sweep's baseline (or the trials --against selects, paired
// on the --pair-on keys), with its Student t interval at --level. An undefined aggregate (the std of
// one value, anything of no value; paired_sd and the interval of one pair) is blank in the table and
// CSV and null in JSON. An unknown metric or key is exit 2, naming what there is. --where takes its values as JSON
// (which has commas of its own), so it is repeated rather than comma-separated.
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"
#include "proto/config_value.h"
#include "sweeps/spec/json_path.h"

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
  std::vector<std::string> against;
  std::vector<std::string> pair_on;
  double level = 0.95;
};

// KEY=VALUE into a filter (ParseKeyValue); false where there is no key.
bool ParseCondition(const std::string& condition, pb::ResultFilter* filter) {
  std::string key;
  json value;
  if (!ParseKeyValue(condition, &key, &value)) return false;
  filter->set_key(key);
  *filter->mutable_value() = wire::ToConfigValue(value);
  return true;
}

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
  for (const auto& [flag, conditions, filters] :
       {std::tuple{"--where", &options.where, request.mutable_filters()},
        std::tuple{"--against", &options.against, request.mutable_against()}}) {
    for (const std::string& condition : *conditions) {
      if (!ParseCondition(condition, filters->Add())) {
        std::cerr << "rung results: " << flag << " '" << condition
                  << "': expected KEY=VALUE (e.g. position.variant=rope)\n";
        return kUsage;
      }
    }
  }
  for (const std::string& key : options.pair_on) request.add_pair_on(key);
  request.set_level(options.level);
  pb::QueryResultsResponse response;
  grpc::Status status = connection.user().QueryResults(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("results", status);

  std::vector<std::string> columns(response.group_by().begin(), response.group_by().end());
  for (const std::string& name : options.aggregations) columns.push_back(name);
  for (const char* column : {"trials", "paired_diff", "paired_sd", "pairs", "paired_low", "paired_high"}) {
    columns.push_back(column);
  }
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
    cells.push_back(row.has_paired_low() ? NumberOrBlank(row.paired_low(), 4) : "");
    cells.push_back(row.has_paired_high() ? NumberOrBlank(row.paired_high(), 4) : "");
    object["trials"] = row.trials();
    object["paired_diff"] = row.has_paired_difference_mean() ? NumberOrNull(row.paired_difference_mean()) : json();
    object["paired_sd"] = paired_sd ? NumberOrNull(row.paired_difference_sd()) : json();
    object["paired_low"] = row.has_paired_low() ? NumberOrNull(row.paired_low()) : json();
    object["paired_high"] = row.has_paired_high() ? NumberOrNull(row.paired_high()) : json();
    object["pairs"] = row.pairs();
    object["flops"] = row.flops();
    object["tokens"] = row.tokens();
    object["trial_ids"] = std::vector<int64_t>(row.trial_ids().begin(), row.trial_ids().end());
    table.AddRow(cells, object);
  }
  if (options.format == "table") {
    std::string shared = "same-seed";
    if (!response.pair_on().empty()) {
      shared = "same";
      for (int i = 0; i < response.pair_on_size(); ++i) shared += (i == 0 ? "-" : ",") + response.pair_on(i);
    }
    std::cout << "sweep " << options.sweep_id << ": " << response.metric() << " (" << options.summary
              << " value per trial); paired_diff: mean " << shared << " difference against the "
              << (options.against.empty() ? "baseline " : "trials ")
              << wire::FromConfigEntries(response.baseline()).dump() << " (sd over pairs"
              << (response.level() > 0 ? "; paired_low..paired_high: its Student t interval at " +
                                             Number(100.0 * response.level(), 3) + "%"
                                       : std::string())
              << ")\n\n";
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
      "each trial minus the baseline trial with the same rung, seed and other axis values) and its Student t\n"
      "interval (paired_low, paired_high: mean +- t sd / sqrt(pairs), from two pairs on; exact where the\n"
      "differences are independent normal draws). --against and --pair-on compare arms that differ in several\n"
      "keys: --against label=yarn --pair-on seed pairs each trial with the label=yarn trial of its seed.",
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
  command->add_option("--where", options->where,
                      "Only trials with KEY=VALUE (VALUE as JSON, or a string); repeat a key for any of several values")
      ->type_name("KEY=VALUE");
  command
      ->add_option("--against", options->against,
                   "The reference of the paired differences: the trials with KEY=VALUE (repeatable; all must hold), "
                   "in place of the spec's baseline")
      ->type_name("KEY=VALUE");
  command
      ->add_option("--pair-on", options->pair_on,
                   "Keys, comma-separated, a trial shares with its reference twin (with the rung), e.g. seed; "
                   "default: every sweep axis the reference does not name, and the seed")
      ->delimiter(',')
      ->type_name("KEY,...");
  command->add_option("--level", options->level, "Level of the paired t intervals")
      ->check(CLI::Range(0.5, 0.999))
      ->type_name("P");
}

}  // namespace

RUNG_CLI_COMMAND("results", kResults, AddResultsCommand);

}  // namespace rung::cli
