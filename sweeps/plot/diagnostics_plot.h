// sweeps/plot/diagnostics_plot.h
//
// Figures of one trained model's attention diagnostics (docs/science.md sections 7 and 9), drawn by
// gnuplot from the documents rung-train writes at the end of a trial (its `diagnostics` record and
// the `extrapolation` table of its final record; formats in coordinator/store/SCHEMA.md):
//
//   effective_length.{svg,png}  E_2 = 1 / sum a^2 against query position, one line per layer and head
//                               (log-log), with E_2 = position (uniform attention) for reference.
//   pair_usage.{svg,png}        frequency-pair usage per head as a heatmap (rows layer.head, columns
//                               pairs from fast to slow), each row divided by its maximum; each
//                               head's dominant band (the pair whose contribution varies most with
//                               distance: another measurement than usage, the key says so) marked
//                               with a cross centred in its cell. No pairs: a figure that says so.
//   gap_counting.{svg,png}      the bucket means of ln Lambda against ln ln n per layer and pooled over
//                               every layer, each with the OLS line whose slope is xi_Lambda (the legend
//                               gives it and its half-IQR).
//   extrapolation.{svg,png}     validation loss per position at each evaluated length and method
//                               (only when the trial evaluated beyond its training length).
//   diagnostics.gp, *.dat, gnuplot.log
//
// WriteNiahGridPlot draws the multi-key needle-in-a-haystack grid (the trainer's `niah_grid` record):
//   niah_<m>x_<method>.{svg,png}  answer accuracy as a heatmap, needle depth against the number of
//                                 distractors, one figure per evaluated length and method.
//
// WriteBandAblationPlot draws LeRoPE's leave-one-out band ablation (the trainer's `band_ablation` record):
//   band_ablation.{svg,png}  the loss change with each pair reverted to RoPE's frequency and with it zeroed
//                            (LeRoPE D.1's), two bars per pair (one where the record predates zeroing).
//
// WriteFrequencyProfilePlot draws learned rotary frequencies against RoPE's:
//   frequency_profile.{svg,png}  wavelength 2 pi / theta over the training length against the pair
//                                index (log y), RoPE's theta_f = b^(-f/pairs) dashed, one line per
//                                learned profile, and the training length (1) and LeRoPE's reported dominant band (2.2x) marked.
//
// Contract: the payloads are typed (core/records/diagnostics_payloads.h); INVALID_ARGUMENT for one that
// holds nothing to draw (no layer, grid or pair), else the errors of RenderGnuplot.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/records/trainer_records.h"

namespace rung::plot {

struct DiagnosticsPlotOptions {
  std::string out_dir;              // created if missing
  std::string title;                // e.g. "trial 12: adarope L2-d32 seed 0"
  std::string gnuplot = "gnuplot";  // the executable, searched on PATH
  int width = 1200;
  int height = 800;
};

// Writes the figures, their data and script; the figure paths on success.
// `extrapolation`: the final record's evaluations beyond the training length (may be empty).
StatusOr<std::vector<std::string>> WriteDiagnosticsPlots(const records::AttentionDiagnostics& attention,
                                                         const std::vector<records::ExtrapolationResult>& extrapolation,
                                                         const DiagnosticsPlotOptions& options);

// INVALID_ARGUMENT for a payload without grids.
StatusOr<std::vector<std::string>> WriteNiahGridPlot(const records::NiahGridDiagnostics& grid,
                                                     const DiagnosticsPlotOptions& options);

// INVALID_ARGUMENT for a payload without pairs.
StatusOr<std::vector<std::string>> WriteBandAblationPlot(const records::BandAblationDiagnostics& ablation,
                                                         const DiagnosticsPlotOptions& options);

// WriteHeadInfluencePlot draws AdaRoPE B.3's head influence (the trainer's `head_influence` record):
//   head_influence.{svg,png}  each query head's loss increase (L<layer>H<head>) with all its AdaRoPE
//                             parameters reset to their start, AdaFreq's alone and AdaScale's alone,
//                             three bars per head. INVALID_ARGUMENT without heads.
StatusOr<std::vector<std::string>> WriteHeadInfluencePlot(const records::HeadInfluenceDiagnostics& influence,
                                                          const DiagnosticsPlotOptions& options);

// WriteGapCountingByLengthPlot draws the pooled gap counting at each evaluated length (paper 004's
// reading at n_eval: train.diagnostics_multiples):
//   gap_counting_lengths.{svg,png}  mean ln Lambda against ln ln n over each record's n-grid, the
//                                   training length's (`at_t`) and each of `beyond`, with its OLS line
//                                   and xi_Lambda ± half-IQR in the key.
// Nothing (no file) where no record has a bucket with a finite mean.
StatusOr<std::vector<std::string>> WriteGapCountingByLengthPlot(const records::AttentionDiagnostics& at_t,
                                                                const std::vector<records::AttentionDiagnostics>& beyond,
                                                                const DiagnosticsPlotOptions& options);

// One learned frequency vector (pairs from fast to slow) and its label ("layer 0", "L1.h2").
struct FrequencyProfile {
  std::string label;
  std::vector<double> theta;
};

// INVALID_ARGUMENT without profiles or with a non-positive base or length.
StatusOr<std::vector<std::string>> WriteFrequencyProfilePlot(const std::vector<FrequencyProfile>& profiles,
                                                             double rope_base, double train_length,
                                                             const DiagnosticsPlotOptions& options);

}  // namespace rung::plot
