#include "coordinator/client/command_registry.h"
#include "coordinator/cli/commands/plot_command.h"

#include <iostream>
#include <memory>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_fetch.h"
#include "coordinator/cli/sweep_figures.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/ladder_csv.h"
#include "sweeps/plot/gnuplot_plot.h"
#include "sweeps/spec/json_path.h"

namespace rung::cli {

namespace {

// "<figures>: <why>" for a stored sweep that has no ladder to draw when its SUCCEEDED trials all trained nothing (evaluation
// trials, train.steps 0); "" when some trained, or when the trials cannot be read (the ladder's own
// error then stands).
std::string UntrainedSweep(const LadderSource& source) {
  StatusOr<std::unique_ptr<CoordinatorConnection>> connection = CoordinatorConnection::Open(source.connection);
  if (!connection.ok()) return "";
  rung::v1::ListTrialsRequest request;
  request.set_sweep_id(source.sweep_id);
  request.add_states(rung::v1::TRIAL_STATE_SUCCEEDED);
  std::vector<rung::v1::Trial> trials;
  if (!FetchTrials(**connection, request, &trials).ok() || trials.empty()) return "";
  for (const rung::v1::Trial& trial : trials) {
    if (trial.tokens() > 0) return "";
  }
  return "loss_vs_compute and multipliers: the sweep's " + std::to_string(trials.size()) +
         " SUCCEEDED trial(s) trained nothing (evaluation trials, train.steps 0): there is no loss against "
         "training compute to fit";
}

// The ladder figures (loss_vs_compute, multipliers), their files on `out`; an exit code, kOk when drawn.
int WriteLadderFigures(const fit::LadderResults& ladder, const std::string& baseline, const LadderMetric& metric,
                       const fit::PowerLawResiduals& residuals, const PlotCommandOptions& options, std::ostream& out,
                       std::ostream& err) {
  fit::MultiplierOptions multiplier_options;
  multiplier_options.baseline = baseline;
  multiplier_options.fit.residuals = residuals;
  multiplier_options.e_sensitivity = false;
  multiplier_options.bootstrap = 1000;
  // Where the ladder's runs have N and D: the multipliers predicted by fitted L(N, D) too, drawn as bands.
  multiplier_options.predict = true;
  StatusOr<fit::MultiplierReport> report = fit::ComputeMultipliers(ladder, multiplier_options);
  if (!report.ok()) {
    err << "rung plot: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument ? kUsage : kFailure;
  }
  if (metric.maximize && report->ladder_points > 1) {
    // Compute multipliers and power laws read a loss that falls with compute.
    err << "rung plot: the sweep's metric " << metric.name << " is maximized; loss against compute and the "
        << "compute multipliers compare a loss, so they are not drawn (rung fit SWEEP --metric val_loss fits the "
           "validation loss)\n";
    return kOk;
  }
  fit::PlotOptions plot_options;
  plot_options.out_dir = options.out_dir;
  plot_options.gnuplot = options.gnuplot;
  plot_options.metric = metric.name;
  plot_options.maximize = metric.maximize;
  StatusOr<std::vector<std::string>> files = fit::WritePlots(report.value(), plot_options);
  if (!files.ok()) {
    err << "rung plot: " << files.status().message() << "\n";
    return files.status().code() == StatusCode::kInvalidArgument ? kUsage : kFailure;
  }
  for (const std::string& file : files.value()) out << file << "\n";
  return kOk;
}

}  // namespace

int RunPlotCommand(const PlotCommandOptions& options, std::ostream& out, std::ostream& err) {
  LadderSource source = options.source;
  if (!options.csv_path.empty()) source.csv_path = options.csv_path;
  const bool stored = source.csv_path.empty() && source.sweep_id > 0;
  TrialSelection only;
  for (const std::string& condition : options.where) {
    std::string key;
    nlohmann::json value;
    if (!ParseKeyValue(condition, &key, &value)) {
      err << "rung plot: --where '" << condition << "': expected KEY=VALUE (e.g. label=yarn)\n";
      return kUsage;
    }
    only[key].push_back(value);
  }
  if (!only.empty() && !stored) {
    err << "rung plot: --where selects a stored sweep's trials; a ladder CSV has none\n";
    return kUsage;
  }
  StatusOr<fit::PowerLawResiduals> residuals = fit::ParsePowerLawResiduals(options.power_law_residuals);
  if (!residuals.ok()) {
    err << "rung plot: --power-law-residuals: " << residuals.status().message() << "\n";
    return kUsage;
  }
  std::string baseline = options.baseline;
  LadderMetric metric;
  if (!only.empty()) {
    // --where draws the selected trials' figures; the ladder's fit reads every trial.
    err << "rung plot: skipped the ladder figures (loss_vs_compute, multipliers): --where selects trials, and a "
           "ladder's fit reads every trial\n";
  } else {
    StatusOr<fit::LadderResults> ladder = LoadLadder(source, &baseline, &metric);
    if (ladder.ok()) {
      const int code = WriteLadderFigures(*ladder, baseline, metric, *residuals, options, out, err);
      if (code != kOk) return code;
    } else {
      // A stored evaluation sweep has no ladder; its other figures are still drawn.
      const StatusCode code = ladder.status().code();
      const std::string untrained = stored && (code == StatusCode::kInvalidArgument ||
                                               code == StatusCode::kFailedPrecondition)
                                        ? UntrainedSweep(source)
                                        : "";
      if (untrained.empty()) {
        err << "rung plot: " << ladder.status().message() << "\n";
        return code == StatusCode::kUnavailable ? kUnavailable : kUsage;
      }
      err << "rung plot: skipped " << untrained << "\n";
    }
  }
  if (stored) {  // a stored sweep: its curves, frequencies and evaluations too
    StatusOr<std::unique_ptr<CoordinatorConnection>> connection = CoordinatorConnection::Open(source.connection);
    if (!connection.ok()) return ReportConnectionError("plot", connection.status(), err);
    StatusOr<SweepFigures> figures =
        WriteSweepFigures(**connection, source.sweep_id, options.out_dir, options.gnuplot, only);
    if (!figures.ok()) {
      err << "rung plot: " << figures.status().message() << "\n";
      // INVALID_ARGUMENT from the figures is an output file rung may not write (a read-only file).
      return figures.status().code() == StatusCode::kUnavailable       ? kUnavailable
             : figures.status().code() == StatusCode::kInvalidArgument ? kUsage
                                                                       : kFailure;
    }
    for (const std::string& skipped : figures->skipped) err << "rung plot: skipped " << skipped << "\n";
    for (const std::string& file : figures->files) out << file << "\n";
  }
  return kOk;
}

void AddPlotCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<PlotCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "plot",
      "Figures of a ladder (gnuplot, SVG and PNG): loss against compute per variant with the shared-E power-law\n"
      "fits and the piecewise compute multipliers as labels (loss_vs_compute), and the multipliers against\n"
      "compute (multipliers; where the ladder's runs have N and D, also those predicted by L(N, D) fitted per\n"
      "variant, as rung fit reports them, with their intervals as bands). For a stored sweep also the validation curves per rung (loss_curves_<rung>), the\n"
      "learned frequency profiles at the largest rung against RoPE's (frequency_profile), and for trials evaluated\n"
      "beyond the training length the loss against the evaluation length (loss_vs_length) and by position at the\n"
      "longest (loss_by_position), a line per extension method and per trial's differing axis values. An\n"
      "evaluation sweep (train.steps 0) gets those, and stderr names the figures skipped and why. The gnuplot\n"
      "scripts and data are written beside them.");
  AddLadderSourceOptions(command, &options->source);
  command->add_option("--baseline", options->baseline,
                      "The variant the multipliers are measured against (default: the sweep's baseline)")
      ->type_name("VARIANT");
  command->add_option("--out", options->out_dir, "Output folder (created if missing)")->type_name("DIR")->required();
  command
      ->add_option("--where", options->where,
                   "A stored sweep's trial figures (curves, frequencies, evaluations) draw only the trials whose axis "
                   "KEY (a label, seed, position.variant) has VALUE (JSON, or a string); repeat a key for any of several "
                   "values. The ladder figures, which read every trial, are then not drawn")
      ->type_name("KEY=VALUE");
  command->add_option("--gnuplot", options->gnuplot, "gnuplot executable (default: gnuplot on PATH)")
      ->type_name("PATH");
  command
      ->add_option("--power-law-residuals", options->power_law_residuals,
                   "What the drawn power laws' fits minimise: ln (default) or nats (least squares on L, as the "
                   "LeRoPE paper fits; rung fit --power-law-residuals)")
      ->type_name("ln|nats");
  command->callback([options, exit_code]() { *exit_code = RunPlotCommand(*options, std::cout, std::cerr); });
}

RUNG_CLI_COMMAND("plot", kResults, AddPlotCommand);

}  // namespace rung::cli
