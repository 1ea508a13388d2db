// coordinator/cli/commands/plot_command.h
//
// `rung plot --from-csv FILE --baseline VARIANT --out DIR`: writes loss_vs_compute.{svg,png} (loss
// against compute per variant, the shared-E power-law fits, piecewise multipliers as labels) and
// multipliers.{svg,png} (the multiplier against compute per variant), with their gnuplot script and
// data, into DIR (sweeps/plot/gnuplot_plot.h). `rung plot SWEEP --out DIR` (a stored sweep) also
// draws its validation curves per rung, learned frequency profiles and evaluations beyond the
// training length (sweep_figures.h). A stored sweep whose SUCCEEDED trials all trained nothing
// (evaluation trials, train.steps 0) has no ladder: its other figures are drawn, and stderr says
// "rung plot: skipped <figures>: <why>" for each kind left out.
// Needs gnuplot (Debian: gnuplot-nox).
//
// Exit codes (exit_codes.h): 0 done; 2 bad input (missing file, bad CSV, unknown baseline, an
// output folder that cannot be made); 1 gnuplot missing or failing (its stderr is printed).
#pragma once

#include <CLI/CLI.hpp>

#include "coordinator/cli/ladder_source.h"
#include <ostream>
#include <string>

namespace rung::cli {

struct PlotCommandOptions {
  std::string csv_path;
  LadderSource source;  // a stored sweep (source.sweep_id) when csv_path is empty
  std::string baseline;
  std::string out_dir;
  std::string gnuplot = "gnuplot";
  std::string power_law_residuals = "ln";  // the drawn power laws' fit: ln | nats (sweeps/fit/power_law.h)
  std::vector<std::string> where;          // KEY=VALUE: the trials the stored sweep's figures draw
};

void AddPlotCommand(CLI::App& app, int* exit_code);

// The command itself: the files written on `out`, errors on `err`; returns the exit code.
int RunPlotCommand(const PlotCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace rung::cli
