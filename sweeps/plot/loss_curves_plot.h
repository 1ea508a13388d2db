// sweeps/plot/loss_curves_plot.h
//
// Training curves of a sweep, one figure per rung (and per group within a rung, when the caller
// groups the cells of a crowded rung): a metric (typically val_loss, or train_loss) against training
// compute 6ND (log x), one line per trial, so that a reader sees where curves separate and whether
// they have flattened:
//   loss_curves_<rung>[_<group>].{svg,png}, loss_curves.gp, loss_curves_<rung>[_<group>].dat
// Each cell (the trial's axis values but the seed) has one colour, mark and dash, and one key entry
// ("lerope (3 seeds)"); the baseline's cells are black, solid and drawn first, so a cell that
// coincides with the baseline is drawn over it and stays visible. The x axis has readable tics over
// any range (LogAxis).
// Contract: curves with no points are left out; INVALID_ARGUMENT when none is left or the folder
// cannot be made; else the errors of RenderGnuplot.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"

namespace rung::plot {

struct LossCurve {
  std::string rung;                                  // figure it goes into, e.g. "L2-d32"
  std::string label;                                 // the trial, e.g. "lerope seed 1"
  std::string cell;                                  // its cell, e.g. "lerope" (empty: the label)
  std::string group;                                 // its figure within the rung, e.g. "window_width 16"
                                                     // (empty: one figure for the rung)
  bool baseline = false;                             // a cell of the sweep's baseline
  std::vector<std::pair<double, double>> points;     // (compute FLOPs, value), by compute
};

struct LossCurvesOptions {
  std::string out_dir;
  std::string metric = "val_loss";  // the y axis label (literal text)
  std::string title;                // the sweep, e.g. "cpu-ladder"
  std::string gnuplot = "gnuplot";
  int width = 1200;
  int height = 800;
};

StatusOr<std::vector<std::string>> WriteLossCurvesPlots(const std::vector<LossCurve>& curves,
                                                        const LossCurvesOptions& options);

}  // namespace rung::plot
