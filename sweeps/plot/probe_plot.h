// sweeps/plot/probe_plot.h
//
// The figure of a trial's probe (train.probe: docs/science.md section 16), drawn by gnuplot from the
// final record's probe cells:
//   probe_<kind>_<method>.{svg,png}  accuracy as a heatmap, needle depth (rows) against prompt length
//                                    (columns, in tokens), one figure per length-extension method,
//                                    each cell labelled correct/instances.
//   probe_indexing.{svg,png}         the indexing probe (paper 003 Fig. 9): accuracy against the prompts'
//                                    mean tokens (log scale), a bar of +-1 sd of the lists' accuracies,
//                                    each point labelled with its list length, chance (1/4) dashed and
//                                    the best position-blind answer's accuracy dotted.
//   probe.gp, probe_*.dat, gnuplot.log
//
// Contract: INVALID_ARGUMENT for no cells; else the errors of RenderGnuplot. A cell a method does not
// have (a length within the training length scored only without extension) is left blank.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/records/trainer_records.h"
#include "sweeps/plot/diagnostics_plot.h"

namespace rung::plot {

StatusOr<std::vector<std::string>> WriteProbePlot(const std::vector<records::ProbeResult>& cells,
                                                  const DiagnosticsPlotOptions& options);

}  // namespace rung::plot
