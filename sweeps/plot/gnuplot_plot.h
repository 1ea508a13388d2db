// sweeps/plot/gnuplot_plot.h
//
// Figures of a compute-multiplier report (sweeps/fit/compute_multipliers.h), drawn by gnuplot: the
// data files and the script are written into the output folder beside the figures, so a figure can
// be restyled and redrawn by hand (`gnuplot plots.gp` in that folder).
//
//   loss_vs_compute.{svg,png}  seed-mean loss against training compute (log x), one colour per
//                              variant (the baseline black), +-1 sd over seeds as error bars, the
//                              shared-E power-law fit as lines (free E where the shared fit failed),
//                              and each point labelled with its piecewise compute multiplier.
//   multipliers.{svg,png}      the compute multiplier against compute per variant: piecewise (solid,
//                              with the bootstrap interval or else the seeds' spread), shared-E power
//                              law (dashed), and CM = 1 (the baseline).
//   plots.gp, points.dat, curves.dat, multipliers.dat, gnuplot.log (gnuplot's stderr)
//
// Example:
//   PlotOptions options;
//   options.out_dir = "figures";
//   StatusOr<std::vector<std::string>> files = WritePlots(report.value(), options);
//   if (!files.ok()) std::cerr << files.status().message();   // gnuplot's stderr on failure
//
// Needs gnuplot with the pngcairo and svg terminals (Debian: gnuplot-nox).
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/compute_multipliers.h"

namespace rung::fit {

struct PlotOptions {
  std::string out_dir;              // created if missing
  std::string gnuplot = "gnuplot";  // the executable, searched on PATH
  int png_width = 1200;
  int png_height = 800;
};

// Writes the figures, their data and script; the figure paths (SVG and PNG of each) on success.
// INVALID_ARGUMENT: out_dir unusable; FAILED_PRECONDITION: gnuplot not found; INTERNAL: gnuplot
// failed (its stderr in the message).
StatusOr<std::vector<std::string>> WritePlots(const MultiplierReport& report, const PlotOptions& options);

}  // namespace rung::fit
