// coordinator/cli/commands/laws_command.cc
//
// `rung laws SWEEP` (computed by the coordinator, UserService.GetLaws) or `rung laws --from-csv FILE`
// (computed here): scaling laws per variant (sweeps/fit/law_report.h; docs/science.md section 6.7):
// L(N, D) = E + A / N^alpha + B / D^beta by Chinchilla's approach 3 with bootstrap intervals on every
// parameter, the IsoFLOP profiles (approach 2), each variant's compute multiplier against the baseline
// predicted at computes nobody ran (with residual-bootstrap prediction intervals), and a rollout that
// refits without the largest sizes and predicts them. Table, JSON or CSV (sweeps/fit/law_format.h).
// With --plot DIR, after the report, its figures (sweeps/plot/law_plot.h) into DIR, their paths on
// stderr (stdout holds the report alone, whatever its format).
//
// Exit codes (exit_codes.h): 0 done; 2 bad input (missing file, bad CSV with its line, bad options,
// unknown sweep or baseline) and runs that cannot give the laws (too few points, runs that cannot
// identify the form, a fit that does not converge: said with how far it got), as the coordinator's
// FAILED_PRECONDITION is for `rung laws SWEEP`; 1 any other failure; 3 coordinator unreachable; 4 token
// refused. --plot as `rung plot`: 2 for a folder that cannot be made (before any fit), 1 when gnuplot
// fails or is missing (the report is printed all the same).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/ladder_source.h"
#include "proto/law_report_proto.h"
#include "sweeps/fit/law_format.h"
#include "sweeps/fit/law_report.h"
#include "sweeps/fit/law_runs.h"
#include "sweeps/plot/gnuplot_script.h"
#include "sweeps/plot/law_plot.h"

namespace rung::cli {
namespace {

struct LawsCommandOptions {
  LadderSource source;
  std::string baseline;
  std::string metric;
  std::vector<std::string> variant_keys;
  std::string sharing = "none";
  std::string format = "table";
  int bootstrap = 200;
  uint64_t seed = 0;
  std::vector<double> at;
  double tokens_per_param = 20;
  int rollout = 1;
  double level = 0.95;
  std::string plot_dir;  // --plot: "" for no figures
  std::string gnuplot = "gnuplot";
};

int ExitFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kNotFound: return kUsage;
    case StatusCode::kUnavailable: return kUnavailable;
    default: return kFailure;
  }
}

StatusOr<fit::LawReport> SweepLaws(const LawsCommandOptions& options, const fit::LawOptions& law, int* exit_code) {
  StatusOr<std::unique_ptr<CoordinatorConnection>> connection = CoordinatorConnection::Open(options.source.connection);
  if (!connection.ok()) {
    *exit_code = ReportConnectionError("laws", connection.status());
    return connection.status();
  }
  rung::v1::GetLawsRequest request;
  request.set_sweep_id(options.source.sweep_id);
  request.set_metric(options.metric);
  for (const std::string& key : options.variant_keys) request.add_variant_keys(key);
  request.set_baseline(options.baseline);
  request.set_sharing(options.sharing);
  request.set_bootstrap(law.bootstrap == 0 ? -1 : law.bootstrap);  // the RPC reads 0 as its default
  request.set_seed(law.seed);
  for (double compute : law.at) request.add_at(compute);
  request.set_tokens_per_param(law.tokens_per_param);
  request.set_rollout(law.rollout);
  request.set_level(law.level);
  rung::v1::GetLawsResponse response;
  CoordinatorConnection& client = *connection.value();
  // Bootstrap refits take a while on big sweeps: no short deadline.
  grpc::Status status = client.user().GetLaws(client.StreamContext().get(), request, &response);
  if (!status.ok()) {
    *exit_code = ReportRpcError("laws", status);
    return Status::Unknown(status.error_message());
  }
  return wire::FromProto(response.report());
}

int RunLaws(const LawsCommandOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<fit::ReportFormat> format = fit::ParseReportFormat(options.format);
  if (!format.ok()) {
    err << "rung laws: --format: " << format.status().message() << "\n";
    return kUsage;
  }
  StatusOr<fit::LawSharing> sharing = fit::ParseLawSharing(options.sharing);
  if (!sharing.ok()) {
    err << "rung laws: --sharing: " << sharing.status().message() << "\n";
    return kUsage;
  }
  if (options.bootstrap < 0 || options.rollout < 0) {
    err << "rung laws: --" << (options.bootstrap < 0 ? "bootstrap" : "rollout") << " must be >= 0\n";
    return kUsage;
  }
  fit::LawOptions law;
  law.fit.sharing = *sharing;
  law.bootstrap = options.bootstrap;
  law.seed = options.seed;
  law.at = options.at;
  law.tokens_per_param = options.tokens_per_param;
  law.rollout = options.rollout;
  law.level = options.level;
  law.baseline = options.baseline;
  const bool from_csv = !options.source.csv_path.empty();
  if (from_csv == (options.source.sweep_id > 0)) {
    err << "rung laws: give a sweep id or --from-csv FILE (one of them)\n";
    return kUsage;
  }
  if (!options.plot_dir.empty()) {
    // Before the fit, which may take minutes: a folder that cannot be made is a usage error now.
    if (Status folder = plot::MakeOutputFolder(options.plot_dir); !folder.ok()) {
      err << "rung laws: --plot: " << folder.message() << "\n";
      return kUsage;
    }
  }
  StatusOr<fit::LawReport> report = Status::Unknown("");
  int exit_code = kOk;
  if (from_csv) {
    if (!options.variant_keys.empty()) {
      err << "rung laws: --variant-keys names a sweep's variants; a CSV names them in its variant column\n";
      return kUsage;
    }
    StatusOr<fit::LawRuns> runs = fit::ReadLawRunsCsv(options.source.csv_path);
    if (!runs.ok()) {
      err << "rung laws: " << runs.status().message() << "\n";
      return runs.status().code() == StatusCode::kNotFound || runs.status().code() == StatusCode::kInvalidArgument
                 ? kUsage
                 : kFailure;
    }
    if (!options.metric.empty()) runs->metric = options.metric;
    report = fit::FitLaws(*runs, law);
    if (!report.ok()) {
      err << "rung laws: " << report.status().message() << "\n";
      return ExitFor(report.status());
    }
  } else {
    report = SweepLaws(options, law, &exit_code);
    if (!report.ok()) return exit_code;
  }
  out << fit::FormatLawReport(*report, *format);
  if (options.plot_dir.empty()) return kOk;
  out.flush();
  plot::LawPlotOptions plot_options;
  plot_options.out_dir = options.plot_dir;
  plot_options.gnuplot = options.gnuplot;
  StatusOr<std::vector<std::string>> files = plot::WriteLawFigures(*report, plot_options);
  if (!files.ok()) {
    err << "rung laws: --plot: " << files.status().message() << "\n";
    return files.status().code() == StatusCode::kInvalidArgument ? kUsage : kFailure;
  }
  for (const std::string& file : *files) err << "rung laws: wrote " << file << "\n";
  return kOk;
}

void AddLawsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<LawsCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "laws",
      "Scaling laws per variant: L(N, D) = E + A / N^alpha + B / D^beta fitted as Hoffmann et al. (approach 3:\n"
      "Huber loss, delta 1e-3, on ln L against the log-sum-exp form, L-BFGS from a grid of starts), with\n"
      "percentile-bootstrap intervals on every parameter over the independent units (seeds where there are\n"
      "several, else runs; none below 8), the compute-optimal allocation N_opt ~ C^a; the IsoFLOP profiles\n"
      "(approach 2: per compute budget a Huber parabola in ln N, its minimum N*, and N* = G C^a); each\n"
      "variant's compute multiplier against the baseline predicted at computes nobody ran (along D = r N and\n"
      "at each method's optimum), with residual-bootstrap prediction intervals; and a rollout that refits\n"
      "without the largest sizes and predicts their runs.\n"
      "rung laws SWEEP: the coordinator fits the sweep's finished trials (N = FLOPs / 6 D, D = tokens).\n"
      "rung laws --from-csv FILE: columns n, d, loss and optionally variant, seed (loss in nats; --metric\n"
      "val_bpb says bits per byte). --format json: one object; csv: one value per line.\n"
      "--plot DIR: also the figures (gnuplot, SVG and PNG; the script and data beside them): loss against N and\n"
      "against D with the fitted law along each group of runs (law_loss_vs_n, law_loss_vs_d), the IsoFLOP\n"
      "parabolas and their minima N* (isoflop), the predicted multipliers with their bands (law_multipliers),\n"
      "the residuals (law_residuals) and the rollout's predicted against measured loss (law_rollout).");
  command->add_option("sweep", options->source.sweep_id, "A stored sweep on the coordinator (or give --from-csv)");
  command->add_option("--from-csv", options->source.csv_path,
                      "Runs CSV: header n,d,loss[,variant][,seed]; n parameters, d training tokens, loss in nats "
                      "(or --metric's unit)")
      ->type_name("FILE");
  AddConnectionOptions(command, &options->source.connection);
  command->add_option("--baseline", options->baseline,
                      "The variant the predicted multipliers are against (default: the sweep's baseline; none for "
                      "a CSV unless given)")
      ->type_name("VARIANT");
  command->add_option("--metric", options->metric,
                      "SWEEP: the metric to fit (default: the sweep's); CSV: what the loss column is (val_loss: "
                      "nats, the default; val_bpb: bits per byte)")
      ->type_name("NAME");
  command
      ->add_option("--variant-keys", options->variant_keys,
                   "SWEEP only: config keys whose values name a variant (default: every sweep axis but seed, "
                   "train.tokens and train.steps)")
      ->delimiter(',')
      ->type_name("KEY,...");
  command->add_option("--sharing", options->sharing,
                      "none (default: one fit per variant), exponents (one alpha and beta for all variants) or E "
                      "(one E)")
      ->type_name("none|exponents|E");
  command->add_option("--format", options->format, "table (default), json or csv")->type_name("FORMAT");
  command->add_option("--bootstrap", options->bootstrap,
                      "Replicates of each bootstrap (parameters, predictions, IsoFLOP); 0: no intervals (default 200)")
      ->type_name("N");
  command->add_option("--seed", options->seed, "Seed of the bootstraps' generator (reproducible intervals)")
      ->type_name("SEED");
  command->add_option("--at", options->at,
                      "Computes (FLOPs) to predict multipliers at (default: every half decade from the smallest run "
                      "to 100x the largest)")
      ->delimiter(',')
      ->type_name("C,...");
  command->add_option("--tokens-per-param", options->tokens_per_param,
                      "The rule allocation D = r N of the predicted multipliers (default 20)")
      ->type_name("R");
  command->add_option("--rollout", options->rollout,
                      "How many of the largest sizes the rollout holds out and predicts (default 1; 0: none)")
      ->type_name("K");
  command->add_option("--level", options->level, "Level of every interval (default 0.95)")
      ->check(CLI::Range(0.5, 0.999))
      ->type_name("LEVEL");
  command->add_option("--plot", options->plot_dir,
                      "Also write the figures into DIR (created if missing); their paths go to stderr")
      ->type_name("DIR");
  command->add_option("--gnuplot", options->gnuplot, "gnuplot executable for --plot (default: gnuplot on PATH)")
      ->type_name("PATH");
  command->callback([options, exit_code]() { *exit_code = RunLaws(*options, std::cout, std::cerr); });
}

}  // namespace

RUNG_CLI_COMMAND("laws", kResults, AddLawsCommand);

}  // namespace rung::cli
