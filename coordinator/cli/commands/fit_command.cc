#include "coordinator/client/command_registry.h"
#include "coordinator/cli/commands/fit_command.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"
#include "sweeps/fit/compute_count.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/ladder_csv.h"
#include "sweeps/fit/report_format.h"
#include "sweeps/fit/report_rows.h"
#include "proto/fit_report_proto.h"

namespace rung::cli {
namespace {

// "0, 0.5,1.2" -> values; false with a message naming the bad item.
bool ParseEGrid(const std::string& text, std::vector<double>* values, std::string* error) {
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    size_t begin = item.find_first_not_of(" \t"), end = item.find_last_not_of(" \t");
    std::string trimmed = begin == std::string::npos ? "" : item.substr(begin, end - begin + 1);
    char* stop = nullptr;
    errno = 0;
    double value = std::strtod(trimmed.c_str(), &stop);
    if (trimmed.empty() || stop != trimmed.c_str() + trimmed.size() || errno == ERANGE) {
      *error = "--e-grid: '" + trimmed + "' is not a number (expected E values in nats, e.g. 0,0.5,1.0)";
      return false;
    }
    values->push_back(value);
  }
  if (values->empty()) {
    *error = "--e-grid: no values";
    return false;
  }
  return true;
}

// `rung fit SWEEP`: the coordinator computes the fit on the sweep's stored results and stores it.
int RunStoredSweepFit(const FitCommandOptions& options, const std::vector<double>& e_grid, fit::ReportFormat format,
                      std::ostream& out, std::ostream& err) {
  // --compute and --lr-policy before anything is asked of the coordinator.
  if (StatusOr<fit::ComputeCount> count = fit::ParseComputeCount(options.compute); !count.ok()) {
    err << "rung fit: --compute: " << count.status().message() << "\n";
    return kUsage;
  }
  std::optional<double> tuned_value;
  if (options.lr_policy != "best") {
    const std::string prefix = "value=";
    char* end = nullptr;
    const std::string number = options.lr_policy.rfind(prefix, 0) == 0 ? options.lr_policy.substr(prefix.size()) : "";
    const double value = number.empty() ? 0 : std::strtod(number.c_str(), &end);
    if (number.empty() || end == nullptr || *end != '\0' || !(value > 0) || !std::isfinite(value)) {
      err << "rung fit: --lr-policy: '" << options.lr_policy << "' is neither best nor value=X with X > 0\n";
      return kUsage;
    }
    tuned_value = value;
  }
  StatusOr<std::unique_ptr<CoordinatorConnection>> connection = CoordinatorConnection::Open(options.source.connection);
  if (!connection.ok()) return ReportConnectionError("fit", connection.status(), err);
  rung::v1::FitRequest request;
  request.set_sweep_id(options.source.sweep_id);
  request.set_metric(options.metric);
  for (const std::string& key : options.variant_keys) request.add_variant_keys(key);
  request.set_baseline(options.baseline);
  request.set_bootstrap(options.bootstrap == 0 ? -1 : options.bootstrap);  // the RPC reads 0 as its default
  request.set_seed(options.seed);
  if (options.fixed_e) request.set_fixed_e(*options.fixed_e);
  if (tuned_value) request.set_tuned_value(*tuned_value);
  request.set_compute(options.compute);
  if (options.power_law_residuals != "ln") request.set_power_law_residuals(options.power_law_residuals);
  for (double e : e_grid) request.add_e_grid(e);
  rung::v1::FitResponse response;
  CoordinatorConnection& client = *connection.value();
  // Bootstrap refits take a while on big ladders: no short deadline.
  grpc::Status status = client.user().Fit(client.StreamContext().get(), request, &response);
  if (!status.ok()) return ReportRpcError("fit", status);
  switch (format) {
    case fit::ReportFormat::kTable:
      out << response.stored().report_text();
      if (response.fit_id() > 0) {
        out << "\nstored as fit " << response.fit_id() << " (rung fits " << options.source.sweep_id << " --id "
            << response.fit_id() << ")\n";
      } else {
        out << "\nnot stored (the viewer token's fits are computed only)\n";
      }
      break;
    case fit::ReportFormat::kJson: {
      std::vector<fit::ReportRow> rows;
      for (const rung::v1::FitReportRow& row : response.stored().report()) rows.push_back(wire::FromProto(row));
      out << fit::ReportRowsToJson(rows).dump(2) << "\n";
      break;
    }
    case fit::ReportFormat::kCsv: {
      TextTable table({"variant", "label", "estimator", "compute", "loss", "loss_sd", "seeds", "multiplier",
                       "undefined_reason", "baseline_compute", "interval_low", "interval_high",
                       "interval_construction", "interval_units", "p_holm", "wallclock_multiplier", "note"});
      auto optional = [](bool has, double value) { return has ? Number(value, 17) : std::string(); };
      for (const rung::v1::FitReportRow& row : response.stored().report()) {
        if (row.role() != "estimate") continue;
        table.AddRow({row.variant(), row.label(), row.estimator(), Number(row.compute(), 17), Number(row.loss(), 17),
                      optional(row.has_loss_sd(), row.loss_sd()), std::to_string(row.seeds()),
                      optional(row.has_multiplier(), row.multiplier()), row.undefined_reason(),
                      optional(row.has_baseline_compute(), row.baseline_compute()),
                      optional(row.has_interval(), row.interval().low()),
                      optional(row.has_interval(), row.interval().high()),
                      row.has_interval() ? row.interval().construction() : std::string(),
                      row.has_interval() ? std::to_string(row.interval().units()) : std::string(),
                      optional(row.has_p_holm(), row.p_holm()),
                      optional(row.has_wallclock_multiplier(), row.wallclock_multiplier()), row.how()});
      }
      table.PrintCsv(out);
      break;
    }
  }
  return kOk;
}

}  // namespace

int RunFitCommand(const FitCommandOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<fit::ReportFormat> format = fit::ParseReportFormat(options.format);
  if (!format.ok()) {
    err << "rung fit: --format: " << format.status().message() << "\n";
    return kUsage;
  }
  fit::MultiplierOptions multiplier_options;
  multiplier_options.baseline = options.baseline;
  multiplier_options.fixed_e = options.fixed_e;
  multiplier_options.bootstrap = options.bootstrap;
  multiplier_options.seed = options.seed;
  multiplier_options.predict = true;
  if (!options.e_grid.empty()) {
    std::string error;
    if (!ParseEGrid(options.e_grid, &multiplier_options.e_grid, &error)) {
      err << "rung fit: " << error << "\n";
      return kUsage;
    }
  }
  StatusOr<fit::PowerLawResiduals> residuals = fit::ParsePowerLawResiduals(options.power_law_residuals);
  if (!residuals.ok()) {
    err << "rung fit: --power-law-residuals: " << residuals.status().message() << "\n";
    return kUsage;
  }
  multiplier_options.fit.residuals = *residuals;
  if (options.bootstrap < 0) {
    err << "rung fit: --bootstrap must be >= 0\n";
    return kUsage;
  }
  if (Status replicates = fit::CheckBootstrapReplicates(options.bootstrap); !replicates.ok()) {
    err << "rung fit: --" << replicates.message() << "\n";
    return kUsage;
  }
  LadderSource source = options.source;
  if (!options.csv_path.empty()) source.csv_path = options.csv_path;
  if (source.csv_path.empty() && source.sweep_id > 0) {
    return RunStoredSweepFit(options, multiplier_options.e_grid, format.value(), out, err);
  }
  if (!options.compute.empty()) {
    err << "rung fit: --compute counts a sweep's FLOPs from its trials' configs; a ladder CSV's compute column is "
           "used as it is (drop --compute, or fit the sweep: rung fit SWEEP --compute "
        << options.compute << ")\n";
    return kUsage;
  }
  StatusOr<fit::LadderResults> ladder = LoadLadder(source, &multiplier_options.baseline);
  if (!ladder.ok()) {
    err << "rung fit: " << ladder.status().message() << "\n";
    return ladder.status().code() == StatusCode::kUnavailable ? kUnavailable : kUsage;
  }
  StatusOr<fit::MultiplierReport> report = fit::ComputeMultipliers(ladder.value(), multiplier_options);
  if (!report.ok()) {
    err << "rung fit: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument ? kUsage : kFailure;
  }
  out << fit::FormatReport(report.value(), format.value());
  return kOk;
}

void AddFitCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<FitCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "fit",
      "Compute multipliers of a ladder against a baseline: CM = C_base / C_var, where C_base is the compute at\n"
      "which the baseline reaches the variant's loss (CM > 1: the variant needs less compute). Estimators:\n"
      "piecewise in ln C (as published; a loss outside the baseline's range continues the nearest segment),\n"
      "hermite (a monotone cubic in ln C: the piecewise estimator without its bias on convex losses) and the\n"
      "power law L = A C^-alpha + E (one E shared, E free per variant, or --fixed-e; on ln L, least squares\n"
      "with 2+ seeds and a Huber loss with one, or --power-law-residuals nats: least squares on L as the LeRoPE\n"
      "paper fits; bounded, multi-start), with the fits' RMSE and a table of the power-law CM, exponent and RMSE over a grid of fixed E.\n"
      "With 2+ seeds: paired per-seed multipliers (mean, sd), jackknife gap t intervals over the seeds (every\n"
      "CM whose loss gap to the baseline's curve the seeds do not reject) and the p of CM = 1 (Holm-adjusted); with one seed: a bootstrap of the runs for the power laws (8+ points per curve).\n"
      "With seconds: wall-clock CM.\n"
      "rung fit SWEEP: the coordinator fits the sweep's finished trials (final value of its metric, variants\n"
      "named by its axes but seed) and stores the fit with its inputs (list them: rung fits SWEEP).\n"
      "rung fit --from-csv FILE: computed here, nothing stored.");
  AddLadderSourceOptions(command, &options->source);
  command->add_option("--baseline", options->baseline,
                      "The variant the others are measured against (e.g. rope; default: the sweep's baseline)")
      ->type_name("VARIANT");
  command->add_option("--format", options->format, "table (default), json (a list of objects) or csv")
      ->type_name("FORMAT");
  command->add_option("--metric", options->metric, "SWEEP only: the metric to fit (default: the sweep's)")
      ->type_name("NAME");
  command
      ->add_option("--variant-keys", options->variant_keys,
                   "SWEEP only: config keys whose values name a variant (default: every sweep axis but seed)")
      ->delimiter(',')
      ->type_name("KEY,...");
  command
      ->add_option("--e-grid", options->e_grid,
                   "E values (nats, comma-separated) for the E-sensitivity table; default 0 .. 0.95 x the "
                   "smallest loss")
      ->type_name("E,E,...");
  command
      ->add_option("--compute", options->compute,
                   "SWEEP only: the FLOP count on the compute axis: nonembedding (6 N_nonembedding D, default), "
                   "matrix (6 N_matrix D) or total (matrix plus the causal attention term)")
      ->type_name("COUNT");
  command->add_option("--fixed-e", options->fixed_e, "Also report the power law with E fixed at this value (nats)")
      ->type_name("E");
  command
      ->add_option("--power-law-residuals", options->power_law_residuals,
                   "What the power laws' fits minimise: ln (default: ln L_pred - ln L, a Huber loss with one seed and "
                   "least squares with 2+) or nats (L_pred - L, least squares: the LeRoPE paper's Tables 5 and 6)")
      ->type_name("ln|nats");
  command
      ->add_option("--lr-policy", options->lr_policy,
                   "SWEEP only, tuned sweeps: which runs stand for a ladder point: best (default: its tuning cell's "
                   "best tried value) or value=X (the runs at X, snapped to the search's grid)")
      ->type_name("best|value=X");
  command
      ->add_option("--bootstrap", options->bootstrap,
                   "One-seed ladders of 8+ points per curve: bootstrap replicates of the runs for the power laws' "
                   "intervals; 0: none (with 2+ seeds every interval is a t interval over the seeds)")
      ->type_name("N");
  command->add_option("--seed", options->seed, "Seed of the bootstrap's random generator (reproducible intervals)")
      ->type_name("SEED");
  command->callback([options, exit_code]() { *exit_code = RunFitCommand(*options, std::cout, std::cerr); });
}

RUNG_CLI_COMMAND("fit", kResults, AddFitCommand);

}  // namespace rung::cli
