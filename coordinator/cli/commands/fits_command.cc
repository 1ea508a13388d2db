// coordinator/cli/commands/fits_command.cc
//
// `rung fits SWEEP [--id N]`: the fits `rung fit SWEEP` stored on the coordinator, newest first
// (UserService.ListFits); --id N: one fit's report (table, or --format json) or its input ladder
// points (--format csv).
#include <cctype>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"
#include "proto/fit_report_proto.h"
#include "sweeps/fit/report_rows.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;
using nlohmann::json;

struct FitsOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  int64_t fit_id = 0;
};

// "summary=final bootstrap=200 seed=7 compute=nonembedding interval_level=0.95", then fixed_e, e_grid
// and tuned where set.
std::string FitOptionsText(const pb::FitOptions& options) {
  std::string summary = pb::MetricSummary_Name(options.summary());
  const std::string prefix = "METRIC_SUMMARY_";
  if (summary.rfind(prefix, 0) == 0) summary = summary.substr(prefix.size());
  for (char& c : summary) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string text = "summary=" + summary + " bootstrap=" + std::to_string(options.bootstrap()) +
                     " seed=" + std::to_string(options.seed()) + " compute=" + options.compute() +
                     " interval_level=" + Number(options.interval_level());
  if (options.has_fixed_e()) text += " fixed_e=" + Number(options.fixed_e());
  if (!options.power_law_residuals().empty()) text += " power_law_residuals=" + options.power_law_residuals();
  if (options.e_grid_size() > 0) {
    text += " e_grid=";
    for (int i = 0; i < options.e_grid_size(); ++i) text += (i ? "," : "") + Number(options.e_grid(i));
  }
  if (!options.tuned().empty()) text += " tuned=" + options.tuned();
  return text;
}

int RunFits(CoordinatorConnection& connection, const FitsOptions& options) {
  pb::ListFitsRequest request;
  request.set_sweep_id(options.sweep_id);
  request.set_fit_id(options.fit_id);
  pb::ListFitsResponse response;
  grpc::Status status = connection.user().ListFits(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("fits", status);
  if (options.fit_id > 0 && response.fits_size() == 1) {
    const pb::StoredFit& fit = response.fits(0);
    if (options.format == "table") {
      std::cout << "fit " << fit.fit_id() << " of sweep " << fit.sweep_id() << ", " << UtcTime(fit.created_at())
                << " by " << fit.actor() << ": " << fit.points_size() << " ladder points, options "
                << FitOptionsText(fit.options()) << "\n\n"
                << fit.report_text();
      return kOk;
    }
    if (options.format == "json") {
      json object = ToJson(fit);
      object.erase("report_text");
      std::vector<fit::ReportRow> rows;
      for (const pb::FitReportRow& row : fit.report()) rows.push_back(wire::FromProto(row));
      object["report"] = fit::ReportRowsToJson(rows);
      std::cout << object.dump(2) << "\n";
      return kOk;
    }
    TextTable points({"trial", "variant", "label", "compute", "loss", "seed"});
    for (const pb::FitPoint& point : fit.points()) {
      points.AddRow({std::to_string(point.trial_id()), point.variant(), point.label(), Number(point.compute(), 17),
                     Number(point.loss(), 17), std::to_string(point.seed())},
                    ToJson(point));
    }
    points.Print(std::cout, options.format);
    return kOk;
  }
  TextTable table({"fit", "created", "actor", "metric", "baseline", "variant_keys", "points", "options"});
  for (const pb::StoredFit& fit : response.fits()) {
    std::string keys;
    for (const std::string& key : fit.variant_keys()) keys += (keys.empty() ? "" : ",") + key;
    table.AddRow({std::to_string(fit.fit_id()), UtcTime(fit.created_at()), fit.actor(), fit.metric(), fit.baseline(),
                  keys, std::to_string(fit.points_size()), FitOptionsText(fit.options())},
                 ToJson(fit));
  }
  table.Print(std::cout, options.format);
  return kOk;
}

void AddFitsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<FitsOptions>();
  CLI::App* command = AddCommand<FitsOptions>(
      app, exit_code, "fits",
      "The fits `rung fit SWEEP` stored on the coordinator, newest first, with their inputs; --id N prints one\n"
      "fit's report (--format json: the report as JSON; --format csv: the ladder points it used).",
      options, RunFits);
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
  command->add_option("--id", options->fit_id, "One stored fit")->type_name("FIT");
}

}  // namespace

RUNG_CLI_COMMAND("fits", kResults, AddFitsCommand);

}  // namespace rung::cli
