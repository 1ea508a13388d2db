// sweeps/plot/law_plot.h
//
// The figures of a scaling-law report (sweeps/fit/law_report.h; `rung laws ... --plot DIR`), drawn by
// gnuplot, each as SVG and PNG, one panel per variant where a figure has panels:
//
//   law_loss_vs_n.{svg,png}    measured loss against N (log x), the runs grouped (one colour per group,
//                              dark to light as its value grows) by what they share: a compute
//                              budget C = 6 N D (an IsoFLOP grid), a D (a grid of token counts) or a
//                              ratio D / N (a ladder at fixed tokens per parameter), whichever groups
//                              the runs into the fewest groups; through each group the variant's fitted
//                              L(N, D) along that group (its section of the fitted surface), over the
//                              group's sizes.
//   law_loss_vs_d.{svg,png}    the same against D, the runs grouped by C, N or D / N.
//   isoflop.{svg,png}          (with IsoFLOP profiles) each budget's runs, loss against N (log x), its
//                              fitted parabola in ln N over the sizes it ran, and its minimum N* as an
//                              open diamond with the bootstrap interval of N* as a horizontal bar where
//                              it has one; the key says N* or why a budget has none.
//   law_multipliers.{svg,png}  (with predicted multipliers) the predicted CM against compute (log x),
//                              per variant (colour) and allocation (rule: solid; optimal: dashed), the
//                              interval as a shaded band; the computes beyond the largest run shaded
//                              grey and marked "extrapolated"; CM = 1 (the baseline) dashed black;
//                              LawPlotOptions::measured overlaid as points with bars.
//   law_residuals.{svg,png}    ln L - ln L_fitted per run against N (log x), one colour and mark per
//                              variant, 0 as a line, each variant's RMSE in the key.
//   law_rollout.{svg,png}      (when a rollout predicted some runs) predicted against measured loss per
//                              held-out run, the prediction interval as a vertical bar, y = x dashed.
//
// Beside them laws.gp (redraw by hand: `gnuplot laws.gp`; the paths in it are absolute) and the data:
//   law_loss_vs_n_points.dat, law_loss_vs_n_sections.dat, law_loss_vs_d_points.dat,
//   law_loss_vs_d_sections.dat     one index per (variant, group), in panel order
//   isoflop_points.dat, isoflop_parabolas.dat, isoflop_minima.dat
//   law_multipliers.dat            one index per (variant, allocation): compute cm low high extrapolated
//   law_multipliers_measured.dat   one index per variant with measured points
//   law_residuals.dat, law_rollout.dat, gnuplot.log
// Each data file says its columns in a header comment; a value that does not exist is NaN (an index
// with nothing to draw is one line of NaN, so that gnuplot counts the indices as they are written).
//
// Example:
//   LawPlotOptions options;
//   options.out_dir = "figures";
//   StatusOr<std::vector<std::string>> files = WriteLawFigures(report, options);
//
// Contract: the SVG and PNG paths of the figures written, in the order above. INVALID_ARGUMENT when the
// report has no fitted run, or the folder cannot be made; else RenderGnuplot's errors
// (gnuplot_script.h: FAILED_PRECONDITION gnuplot not found, INTERNAL gnuplot failed). A figure is
// written whole or not at all. Needs gnuplot with the pngcairo and svg terminals (Debian: gnuplot-nox).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/law_report.h"

namespace rung::plot {

// A multiplier that was measured (a ladder's), drawn over the predicted ones.
struct MeasuredMultiplier {
  std::string variant;
  double compute = 0;  // FLOPs
  double multiplier = 0;
  std::optional<double> low, high;  // its interval, where it has one
  std::string estimator;            // named in the key: "hermite", "piecewise"
};

struct LawPlotOptions {
  std::string out_dir;              // created if missing
  std::string gnuplot = "gnuplot";  // the executable, searched on PATH
  int width = 1200;                 // of each figure (a figure of 3+ rows of panels is taller)
  int height = 800;
  std::vector<MeasuredMultiplier> measured;
};

// The measured multipliers of a ladder's report to overlay: its hermite rows where it has any, else
// its piecewise rows; the baseline's and undefined ones left out; the interval where a row has one.
std::vector<MeasuredMultiplier> MeasuredMultipliersOf(const fit::MultiplierReport& report);

StatusOr<std::vector<std::string>> WriteLawFigures(const fit::LawReport& report, const LawPlotOptions& options);

}  // namespace rung::plot
