// sweeps/plot/failure_modes_plot.h
//
// Figures of RoPE's four failure modes (docs/science.md section 12) against the context length M, one per
// mode, drawn by gnuplot from rows as `rung diag` builds them (a trained model's heads averaged, and the
// Gaussian reference):
//   position_inversion.{svg,png}  the share of inverted near/far pairs (precision-free: one line per source)
//   position_aliasing.{svg,png}   the share of distances with an aliasing partner, per source and precision
//   token_inversion.{svg,png}     the share of distances where two keys' order flips (one line per source)
//   token_aliasing.{svg,png}      the number of distances where two keys' rounded scores tie, per precision
//   failure_modes.gp, *.dat, gnuplot.log
// Rows: objects with "source" (a label, e.g. "trial 12" or "Gaussian"), "length", "precision" and the
// statistics of core/diagnostics/failure_modes.h by name (null where undefined).
// INVALID_ARGUMENT without rows, else the errors of RenderGnuplot.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "sweeps/plot/diagnostics_plot.h"

namespace rung::plot {

StatusOr<std::vector<std::string>> WriteFailureModePlots(const nlohmann::json& rows,
                                                         const DiagnosticsPlotOptions& options);

}  // namespace rung::plot
