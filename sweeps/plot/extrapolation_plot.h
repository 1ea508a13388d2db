// sweeps/plot/extrapolation_plot.h
//
// Figures of a sweep's evaluations beyond the training length (each trial's final-record
// `extrapolation` table: an evaluation sweep, train.steps 0, over a checkpoint's YaRN c, extension
// methods or lengths; or any sweep that set train.extrapolation_multiples), one pair per figure group
// (the rung of a ladder; one pair when the trials have a single group):
//
//   loss_vs_length[_<group>].{svg,png}    validation loss against the evaluation length in tokens (log2
//                                         x axis, a tic at each length evaluated), one line per trial
//                                         label x extension method, a point at the training length T
//                                         (the trial's val_loss, or the method's own 1x evaluation) and
//                                         at each length evaluated; T marked by a dashed vertical line.
//   loss_by_position[_<group>].{svg,png}  the per-position validation loss of each line's longest
//                                         evaluated length, averaged into at most 64 buckets of
//                                         consecutive positions (a bucket's mean at its mean position),
//                                         T marked. Left out when no evaluation kept its per-position
//                                         losses.
//   extrapolation.gp, loss_vs_length[_<group>].dat, loss_by_position[_<group>].dat
//
// A trial's label is what tells it apart from the other trials of its group: AxesLabel
// (gnuplot_script.h) of the axes whose values differ between them (an axis over
// train.extrapolation_methods left out: each line names its method), "" when nothing differs. A key
// entry reads "<label> (<method>)", or the method alone. With several labels a label is a colour and a
// method a dash and mark; with one label each method is a colour.
//
// Example:
//   EvaluatedTrial trial;
//   trial.axes = {{"train.extrapolation_yarn_c", "0.07"}};
//   trial.val_loss = 2.31;
//   trial.results = final_record.extrapolation;
//   StatusOr<std::vector<std::string>> files = WriteExtrapolationPlots({trial}, options);
//
// Contract: trials without results are left out; INVALID_ARGUMENT when none is left or the folder
// cannot be made; else the errors of RenderGnuplot.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/status.h"
#include "core/records/trainer_records.h"

namespace rung::plot {

struct EvaluatedTrial {
  std::string group;                                      // its figures, e.g. a rung "L2-d32"; "": the only ones
  std::vector<std::pair<std::string, std::string>> axes;  // its axis values: dotted key, value as text
  std::optional<double> val_loss;                         // the validation loss at the training length
  std::vector<records::ExtrapolationResult> results;      // its evaluations beyond the training length
};

struct ExtrapolationPlotOptions {
  std::string out_dir;  // created if missing
  std::string title;    // the sweep, e.g. "yarn-c"
  std::string gnuplot = "gnuplot";
  int width = 1200;
  int height = 800;
};

// The label of each trial within its group (see above), in the order of `trials`.
std::vector<std::string> EvaluatedTrialLabels(const std::vector<EvaluatedTrial>& trials);

StatusOr<std::vector<std::string>> WriteExtrapolationPlots(const std::vector<EvaluatedTrial>& trials,
                                                           const ExtrapolationPlotOptions& options);

}  // namespace rung::plot
