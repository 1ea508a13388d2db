#include "coordinator/cli/fit_command.h"

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "coordinator/cli/exit_codes.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/ladder_csv.h"
#include "sweeps/fit/report_format.h"

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
  if (!options.e_grid.empty()) {
    std::string error;
    if (!ParseEGrid(options.e_grid, &multiplier_options.e_grid, &error)) {
      err << "rung fit: " << error << "\n";
      return kUsage;
    }
  }
  if (options.bootstrap < 0) {
    err << "rung fit: --bootstrap must be >= 0\n";
    return kUsage;
  }
  LadderSource source = options.source;
  if (!options.csv_path.empty()) source.csv_path = options.csv_path;
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
      "piecewise in ln C (primary; a loss outside the baseline's range continues the nearest segment) and the\n"
      "power law L = A C^-alpha + E (one E shared, E free per variant, or --fixed-e; Huber loss on ln L,\n"
      "bounded, multi-start), with the fits' RMSE and a table of the power-law CM over a grid of fixed E.\n"
      "With seeds: paired per-seed multipliers (mean, sd) and bootstrap intervals; with seconds: wall-clock CM.");
  AddLadderSourceOptions(command, &options->source);
  command->add_option("--baseline", options->baseline,
                      "The variant the others are measured against (e.g. rope; default: the sweep's baseline)")
      ->type_name("VARIANT");
  command->add_option("--format", options->format, "table (default), json (a list of objects) or csv")
      ->type_name("FORMAT");
  command
      ->add_option("--e-grid", options->e_grid,
                   "E values (nats, comma-separated) for the E-sensitivity table; default 0 .. 0.95 x the "
                   "smallest loss")
      ->type_name("E,E,...");
  command->add_option("--fixed-e", options->fixed_e, "Also report the power law with E fixed at this value (nats)")
      ->type_name("E");
  command
      ->add_option("--bootstrap", options->bootstrap,
                   "Bootstrap replicates for the intervals (resampling seeds, or runs with one seed); 0: none")
      ->type_name("N");
  command->add_option("--seed", options->seed, "Seed of the bootstrap's random generator (reproducible intervals)")
      ->type_name("SEED");
  command->callback([options, exit_code]() { *exit_code = RunFitCommand(*options, std::cout, std::cerr); });
}

}  // namespace rung::cli
