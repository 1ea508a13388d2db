// sweeps/plot/failure_modes_plot.h
//
// Figures of RoPE's four failure modes (docs/science.md section 12) against the context length M, one per
// mode, drawn by gnuplot from rows as `rung diag` builds them (a trained model's heads averaged, and the
// Gaussian reference):
//   position_inversion.{svg,png}  the share of inverted near/far pairs (precision-free: one line per source)
//   position_aliasing.{svg,png}   the share of distances with an aliasing partner, per source and precision
//   token_inversion.{svg,png}     the share of distances where two keys' order flips (one line per source)
//   token_aliasing.{svg,png}      the number of distances where two keys' scores alias, per precision
//   attention_invariance.{svg,png} the pairs of distances that alias for both related keys, where
//                                  swapping them leaves attention unchanged (paper 003 Fig. 5(c)), per
//                                  precision
//   failure_modes.gp, *.dat, gnuplot.log
// INVALID_ARGUMENT without rows or without a statistic to draw, else the errors of RenderGnuplot.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/plot/diagnostics_plot.h"

namespace rung::plot {

// One row of the figures (and of `rung diag --table failure_modes`): a source's means of the statistics
// of core/diagnostics/failure_modes.h at one context M and precision; NaN where one is undefined.
struct FailureModeSummary {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  std::string source;     // a label, e.g. "trial 12" or "Gaussian"
  int64_t length = 0;     // the context M
  double base = kNone;    // RoPE's base b
  std::string precision;  // bf16 | fp16 | fp32
  double position_inversion = kNone;
  double position_inversion_deviation = kNone;
  double position_aliasing_fraction = kNone;
  double position_aliasing_pairs = kNone;
  double token_inversion = kNone;
  double token_aliasing = kNone;
  double attention_invariance = kNone;
};

StatusOr<std::vector<std::string>> WriteFailureModePlots(const std::vector<FailureModeSummary>& rows,
                                                         const DiagnosticsPlotOptions& options);

}  // namespace rung::plot
