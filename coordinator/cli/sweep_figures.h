// coordinator/cli/sweep_figures.h
//
// The figures `rung plot SWEEP` draws beyond the ladder (which needs only the exported ladder):
//   loss_curves_<rung>.{svg,png}   each SUCCEEDED trial's validation loss against compute, per rung
//                                  (sweeps/plot/loss_curves_plot.h)
//   frequency_profile.{svg,png}    the learned frequency profile (layer 0, first row) of one trial of
//                                  each cell at the largest rung, as wavelength over the training
//                                  length against RoPE's (sweeps/plot/diagnostics_plot.h)
//   diagnostics/trial-<id>/        that trial's attention diagnostics, one trial per cell at the
//                                  largest rung: E_2 by position per head, pair-usage heatmap, the
//                                  gap-counting fit, per-position loss beyond T (as `rung diag --plot`)
//   lr_sweep_<rung>.{svg,png}      tuned sweeps: the metric against the tuned value, one line per
//   best_lr.{svg,png}              method, the chosen value marked; each method's best value against
//                                  N with its fitted law (sweeps/plot/tuning_plot.h)
//   loss_vs_length[_<rung>]        trials with evaluations beyond the training length (an evaluation
//   loss_by_position[_<rung>]      sweep, train.steps 0, or train.extrapolation_multiples): the loss
//                                  against the evaluation length and by position at the longest, one
//                                  line per method and trial labelled by the axis values that differ
//                                  (sweeps/plot/extrapolation_plot.h); one pair per rung when they
//                                  span several
// `only` keeps the trials whose sweep axes (a label, the seed) hold its values: every key it names, a
// key with several values any of them; a key no trial has is INVALID_ARGUMENT naming the axes.
// Everything is read over gRPC (ListTrials, GetTrial, GetMetrics, GetDiagnostics, GetTuning,
// QueryResults: coordinator/client/sweep_evaluations.h).
// Contract: a figure with nothing to draw is left out, and the training curves are named in
// `skipped` with the reason (an evaluation sweep trains nothing); a sweep with neither curves nor
// evaluations is INVALID_ARGUMENT; a sweep without learned rotary frequencies simply has no
// frequency_profile figure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "core/common/status.h"

namespace rung::cli {

struct SweepFigures {
  std::vector<std::string> files;    // the figures written
  std::vector<std::string> skipped;  // "<figures>: <why they were not drawn>"
};

// The trials a figure draws: axis key -> the values it may take (empty: every trial).
using TrialSelection = std::map<std::string, std::vector<nlohmann::json>>;

StatusOr<SweepFigures> WriteSweepFigures(CoordinatorConnection& connection, int64_t sweep_id, const std::string& out_dir,
                                         const std::string& gnuplot, const TrialSelection& only = {});

}  // namespace rung::cli
