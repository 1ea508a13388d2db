// sweeps/plot/pair_profile_plot.h
//
// The pair-by-distance contribution heatmaps of AdaRoPE figures 1 and 5, drawn by gnuplot from a
// diagnostics record (its layers' pair_profile_edges and heads' pair_profile):
//   pair_profile_L<layer>.{svg,png}  one panel per head: frequency pair (0 = fastest) against the
//                                    relative distance bin, coloured by the pair's mean term of the
//                                    unscaled logit there (diverging, symmetric about 0 over the
//                                    layer; a bin no visible pair reaches is left blank)
//   pair_profile.gp, pair_profile_L<layer>_h<head>.dat, gnuplot.log
// INVALID_ARGUMENT when no layer carries a profile (a record of an earlier release, or
// train.diagnostics_pair_profile_bins 0), else the errors of RenderGnuplot.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/plot/diagnostics_plot.h"

namespace rung::plot {

StatusOr<std::vector<std::string>> WritePairProfilePlots(const records::AttentionDiagnostics& attention,
                                                         const DiagnosticsPlotOptions& options);

}  // namespace rung::plot
