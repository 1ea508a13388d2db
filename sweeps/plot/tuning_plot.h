// sweeps/plot/tuning_plot.h
//
// The figures of a learning-rate search (the spec's tune block; docs/science.md section 10):
//   lr_sweep_<rung>.{svg,png}   the metric against the tuned value (log x) at one rung, one line per
//                               method, each cell's chosen value marked (an open mark: unbracketed)
//   best_lr.{svg,png}           each method's best value against the rung's parameter count N
//                               (log-log), with its fitted law value = c N^e
// plus tuning.gp and the .dat files beside them, to redraw by hand.
// Contract: INVALID_ARGUMENT when no cell has a scored value, or the folder cannot be made; else the
// errors of RenderGnuplot.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"

namespace rung::plot {

struct TuningCurve {
  std::string rung;                               // the figure it goes into
  std::string method;                             // the line, e.g. "rope"
  std::vector<std::pair<double, double>> points;  // (value, metric) of the scored values, by value
  std::optional<double> chosen;                   // the best value, once the cell is closed
  bool bracketed = false;
  double n = 0;                                   // the rung's parameter count, for best_lr
};

struct TuningLaw {
  std::string method;
  double coefficient = 0;  // value = coefficient * N^exponent
  double exponent = 0;
};

struct TuningPlotOptions {
  std::string out_dir;
  std::string key = "train.lr";     // the x axis
  std::string metric = "val_loss";  // the y axis
  std::string title;
  std::string gnuplot = "gnuplot";
  int width = 1200;
  int height = 800;
};

StatusOr<std::vector<std::string>> WriteTuningPlots(const std::vector<TuningCurve>& curves,
                                                    const std::vector<TuningLaw>& laws,
                                                    const TuningPlotOptions& options);

}  // namespace rung::plot
