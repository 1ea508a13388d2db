// sweeps/plot/gnuplot_plot.h
//
// Figures of a compute-multiplier report (sweeps/fit/compute_multipliers.h), drawn by gnuplot: the
// data files and the script are written into the output folder beside the figures, so a figure can
// be restyled and redrawn by hand (`gnuplot plots.gp` in that folder).
//
//   loss_vs_compute.{svg,png}  seed-mean loss against training compute (log x), one colour, mark and
//                              dash per variant (the baseline a large black disc and solid line, drawn
//                              first, so a variant that coincides with it is drawn over it), +-1 sd
//                              over seeds as error bars, the shared-E power-law fit as lines (free E
//                              where the shared fit failed; the key names a fit only when one is
//                              drawn), and each point labelled with its piecewise compute multiplier
//                              at the decimals that tell the values apart (x1.003, not x1.00). With
//                              one ladder point (a one-rung sweep) nothing varies along compute: the
//                              figure is each variant's loss as a dot plot (best at the top, the
//                              baseline's loss dashed; variants.dat) and its title says why there is
//                              no fit or multiplier.
//   multipliers.{svg,png}      the compute multiplier against compute per variant: piecewise (solid,
//                              with the bootstrap interval or else the seeds' spread), shared-E power
//                              law (dashed), and CM = 1 (the baseline, behind the variants). Where the
//                              report has predicted rows (MultiplierReport::predicted: a ladder whose
//                              runs have N and D), each variant's multiplier predicted by fitted
//                              L(N, D) too, dash-dot along D = r N and dotted at the laws' optimum,
//                              each with its interval as a shaded band, the computes beyond the
//                              ladder shaded grey ("extrapolated"). Where no variant has a multiplier,
//                              measured or predicted (one rung, no variant but the baseline), a figure
//                              that says why in its place.
// Log axes have several labelled tics over any range (plot::LogAxis). A figure is written whole or
// not at all (plot::RenderGnuplot).
//   plots.gp, points.dat, curves.dat, multipliers.dat, predicted.dat, gnuplot.log (gnuplot's stderr)
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
  // What the ladder's values are: "" (or "val_loss") a validation loss in nats; another name is
  // written as it is on the axes. A maximized metric is ranked highest first in a one-rung figure.
  std::string metric;
  bool maximize = false;
};

// Writes the figures, their data and script; the figure paths (SVG and PNG of each) on success.
// INVALID_ARGUMENT: out_dir unusable; FAILED_PRECONDITION: gnuplot not found; INTERNAL: gnuplot
// failed (its stderr in the message).
StatusOr<std::vector<std::string>> WritePlots(const MultiplierReport& report, const PlotOptions& options);

}  // namespace rung::fit
