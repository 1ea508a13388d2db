#include "sweeps/plot/extrapolation_plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/common/atomic_file.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

// ColorBrewer Dark2, then black and blue for the ninth and tenth.
const std::vector<std::string> kColors = {"#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e",
                                          "#e6ab02", "#a6761d", "#1f78b4", "#000000", "#377eb8"};
constexpr int kDashes[] = {1, 2, 4, 5, 3};
constexpr int kPointTypes[] = {7, 5, 9, 13, 11, 4, 6, 8, 10, 12};
// The most buckets a per-position curve is averaged into.
constexpr size_t kPositionBuckets = 64;

// "%.6g" or "NaN" (gnuplot skips NaN points).
std::string DataNumber(double value) { return std::isfinite(value) ? Format("%.6g", value) : "NaN"; }

// A length in tokens as the axis writes it: 262144, not 2.62144e+05.
std::string Tokens(double length) { return Format("%.0f", length); }

// One line of a group's figures: a trial's evaluations with one method.
struct Line {
  std::string title;                                   // "<label> (<method>)", or the method
  size_t label = 0, method = 0;                        // their indices in the group, for the style
  std::map<double, double> loss_by_length;             // the training length included
  const records::ExtrapolationResult* longest = nullptr;  // its longest evaluation with per-position losses
};

// The training length of a trial's table: each length over its multiple (0 when the table does not say).
double TrainingLength(const std::vector<records::ExtrapolationResult>& results) {
  for (const records::ExtrapolationResult& entry : results) {
    if (entry.multiple > 0 && entry.length > 0) return static_cast<double>(entry.length) / static_cast<double>(entry.multiple);
  }
  return 0;
}

// The dashed vertical lines at the training lengths, each labelled, at staggered heights.
std::string TrainingLengthMarks(const std::set<double>& lengths) {
  std::string lines;
  int index = 0;
  for (double length : lengths) {
    lines += "set arrow from " + Format("%.6g", length) + ", graph 0 to " + Format("%.6g", length) +
             ", graph 1 nohead dt 2 lw 1.5 lc rgb '#777777'\n" + "set label " +
             Quote("training length T = " + Tokens(length)) + " at " + Format("%.6g", length) + ", graph " +
             Format("%.2f", 0.96 - 0.05 * index++) + " offset 0.5,0 tc rgb '#555555' noenhanced\n";
  }
  return lines;
}

// The style of a line: with several labels a colour per label and a dash (and a mark, `marks`) per
// method; with one label a colour per method.
std::string LineStyle(const Line& line, size_t labels, bool marks) {
  const size_t colour = labels > 1 ? line.label : line.method;
  const size_t dash = labels > 1 ? line.method : 0;
  return "lc rgb " + Quote(kColors[colour % kColors.size()]) + " lw 2 dt " +
         std::to_string(kDashes[dash % std::size(kDashes)]) +
         (marks ? " pt " + std::to_string(kPointTypes[line.method % std::size(kPointTypes)]) : "");
}

}  // namespace

std::vector<std::string> EvaluatedTrialLabels(const std::vector<EvaluatedTrial>& trials) {
  // Per group, the keys whose values are not all the same: several values, or a key some trial lacks.
  std::map<std::string, std::map<std::string, std::set<std::string>>> values;  // group -> key -> values
  std::map<std::string, std::map<std::string, size_t>> having;                 // group -> key -> trials
  std::map<std::string, size_t> members;
  for (const EvaluatedTrial& trial : trials) {
    ++members[trial.group];
    for (const auto& [key, value] : trial.axes) values[trial.group][key].insert(value), ++having[trial.group][key];
  }
  const std::string methods = "extrapolation_methods";  // each line names its method
  std::vector<std::string> labels;
  for (const EvaluatedTrial& trial : trials) {
    std::vector<std::pair<std::string, std::string>> differing;
    for (const auto& [key, value] : trial.axes) {
      const bool differs = values[trial.group][key].size() > 1 || having[trial.group][key] < members[trial.group];
      const bool method_axis = key.size() >= methods.size() && key.compare(key.size() - methods.size(), methods.size(), methods) == 0;
      if (differs && !method_axis) differing.emplace_back(key, value);
    }
    labels.push_back(AxesLabel(differing));
  }
  return labels;
}

StatusOr<std::vector<std::string>> WriteExtrapolationPlots(const std::vector<EvaluatedTrial>& trials,
                                                           const ExtrapolationPlotOptions& options) {
  std::vector<EvaluatedTrial> evaluated;
  for (const EvaluatedTrial& trial : trials) {
    if (!trial.results.empty()) evaluated.push_back(trial);
  }
  if (evaluated.empty()) return Status::InvalidArgument("no trial has evaluations beyond its training length to draw");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  const std::vector<std::string> labels = EvaluatedTrialLabels(evaluated);

  std::vector<std::string> groups;  // in the order their first trial comes
  for (const EvaluatedTrial& trial : evaluated) {
    if (std::find(groups.begin(), groups.end(), trial.group) == groups.end()) groups.push_back(trial.group);
  }
  std::ostringstream script;
  script << "# rung plot: evaluations beyond the training length of " << options.title
         << "\n# Redraw with: gnuplot extrapolation.gp (paths are absolute)\n";
  std::vector<std::string> outputs;
  for (const std::string& group : groups) {
    // The group's lines: each trial's methods in the order evaluated.
    std::vector<std::string> group_labels, methods;
    std::vector<Line> lines;
    std::set<double> training_lengths;
    for (size_t t = 0; t < evaluated.size(); ++t) {
      const EvaluatedTrial& trial = evaluated[t];
      if (trial.group != group) continue;
      if (std::find(group_labels.begin(), group_labels.end(), labels[t]) == group_labels.end()) group_labels.push_back(labels[t]);
      const double train_length = TrainingLength(trial.results);
      if (train_length > 0) training_lengths.insert(train_length);
      std::vector<std::string> trial_methods;
      for (const records::ExtrapolationResult& entry : trial.results) {
        if (std::find(trial_methods.begin(), trial_methods.end(), entry.method) == trial_methods.end()) trial_methods.push_back(entry.method);
        if (std::find(methods.begin(), methods.end(), entry.method) == methods.end()) methods.push_back(entry.method);
      }
      for (const std::string& method : trial_methods) {
        Line line;
        line.title = labels[t].empty() ? method : labels[t] + " (" + method + ")";
        line.label = std::find(group_labels.begin(), group_labels.end(), labels[t]) - group_labels.begin();
        line.method = std::find(methods.begin(), methods.end(), method) - methods.begin();
        if (train_length > 0 && trial.val_loss && std::isfinite(*trial.val_loss)) line.loss_by_length[train_length] = *trial.val_loss;
        for (const records::ExtrapolationResult& entry : trial.results) {
          if (entry.method != method || entry.length <= 0) continue;
          line.loss_by_length[static_cast<double>(entry.length)] = entry.val_loss;  // a 1x evaluation replaces val_loss
          if (!entry.val_loss_per_position.empty() && (line.longest == nullptr || entry.length > line.longest->length)) {
            line.longest = &entry;
          }
        }
        lines.push_back(std::move(line));
      }
    }
    const std::string suffix = group.empty() ? "" : "_" + FileNamePart(group);
    const std::string heading = options.title + (group.empty() ? "" : ": rung " + group);

    // Loss against the evaluation length.
    std::ostringstream data;
    std::set<double> lengths;
    double lo = 0, hi = 0;
    bool any = false;
    for (const Line& line : lines) {
      data << "# " << line.title << "\n";
      for (const auto& [length, loss] : line.loss_by_length) {
        data << Tokens(length) << " " << DataNumber(loss) << "\n";
        lengths.insert(length);
        if (!std::isfinite(loss)) continue;
        lo = any ? std::min(lo, loss) : loss;
        hi = any ? std::max(hi, loss) : loss;
        any = true;
      }
      data << "\n\n";
    }
    if (lengths.empty()) continue;  // no length to put on the axis
    const std::string length_name = "loss_vs_length" + suffix;
    RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / (length_name + ".dat")).string(), {data.str()}));
    const double first = *lengths.begin(), last = *lengths.rbegin();
    script << "reset\nset encoding utf8\nset border lw 1.2\nset grid lc rgb '#dddddd'\n"
           << "set title " << DoubleQuote(EnhancedLiteral(heading + ": loss against the evaluation length")) << "\n"
           << "set logscale x 2\nset xrange [" << Format("%.6g", first / 1.25) << ":" << Format("%.6g", last * 1.25) << "]\n";
    if (lengths.size() <= 16) {  // a tic at each length evaluated
      script << "set xtics (";
      size_t i = 0;
      for (double length : lengths) script << (i++ ? ", " : "") << Quote(Tokens(length)) << " " << Format("%.6g", length);
      script << ")\n";
    }
    if (any && hi > lo) script << "set yrange [" << Format("%.6g", lo - 0.05 * (hi - lo)) << ":" << Format("%.6g", hi + 0.12 * (hi - lo)) << "]\n";
    script << "set xlabel 'evaluation length (tokens, log_2 scale)'\nset ylabel 'validation loss (nats)'\n"
           << "set key outside bottom center horizontal spacing 1.1 noenhanced\n"
           << TrainingLengthMarks(training_lengths) << "plot ";
    for (size_t i = 0; i < lines.size(); ++i) {
      script << (i ? ", \\\n  " : "") << Quote((dir / (length_name + ".dat")).string()) << " index " << i
             << " using 1:2 with linespoints ps 1.2 " << LineStyle(lines[i], group_labels.size(), true) << " title "
             << Quote(lines[i].title);
    }
    script << "\n" << SvgAndPngOutputs((dir / length_name).string(), options.width, options.height);
    outputs.push_back(length_name + ".svg");
    outputs.push_back(length_name + ".png");

    // Loss by position at each line's longest evaluated length, in buckets of consecutive positions.
    std::vector<const Line*> drawn;
    std::set<int64_t> longest_lengths;
    for (const Line& line : lines) {
      if (line.longest == nullptr) continue;
      drawn.push_back(&line);
      longest_lengths.insert(line.longest->length);
    }
    if (drawn.empty()) continue;
    std::ostringstream positions;
    for (const Line* line : drawn) {
      const std::vector<double>& losses = line->longest->val_loss_per_position;
      const size_t width = (losses.size() + kPositionBuckets - 1) / kPositionBuckets;
      positions << "# " << line->title << " at " << line->longest->length << " tokens (" << width
                << " position(s) a bucket)\n";
      for (size_t start = 0; start < losses.size(); start += width) {
        const size_t end = std::min(losses.size(), start + width);
        double sum = 0;
        size_t finite = 0;
        for (size_t i = start; i < end; ++i) {
          if (std::isfinite(losses[i])) sum += losses[i], ++finite;
        }
        // Positions count from 1: the bucket [start + 1, end] has its mean at (start + 1 + end) / 2.
        positions << Format("%.6g", (static_cast<double>(start) + 1 + static_cast<double>(end)) / 2) << " "
                  << DataNumber(finite ? sum / static_cast<double>(finite) : std::nan("")) << "\n";
      }
      positions << "\n\n";
    }
    const std::string position_name = "loss_by_position" + suffix;
    RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / (position_name + ".dat")).string(), {positions.str()}));
    const bool one_length = longest_lengths.size() == 1;
    script << "reset\nset encoding utf8\nset border lw 1.2\nset grid lc rgb '#dddddd'\n"
           << "set title "
           << DoubleQuote(EnhancedLiteral(
                  heading + ": loss by position at " +
                  (one_length ? std::to_string(*longest_lengths.begin()) + " tokens (means of " +
                                    std::to_string((*longest_lengths.begin() + kPositionBuckets - 1) / kPositionBuckets) +
                                    " consecutive positions)"
                              : "each line's longest evaluated length (means over " + std::to_string(kPositionBuckets) +
                                    " buckets of consecutive positions)")))
           << "\nset xlabel 'position'\nset ylabel 'validation loss (nats)'\n"
           << "set xrange [0:" << *longest_lengths.rbegin() << "]\nset key outside bottom center horizontal spacing 1.1 noenhanced\n"
           << TrainingLengthMarks(training_lengths) << "plot ";
    for (size_t i = 0; i < drawn.size(); ++i) {
      const std::string title = drawn[i]->title + (one_length ? "" : ", " + std::to_string(drawn[i]->longest->length) + " tokens");
      script << (i ? ", \\\n  " : "") << Quote((dir / (position_name + ".dat")).string()) << " index " << i
             << " using 1:2 with lines " << LineStyle(*drawn[i], group_labels.size(), false) << " title " << Quote(title);
    }
    script << "\n" << SvgAndPngOutputs((dir / position_name).string(), options.width, options.height);
    outputs.push_back(position_name + ".svg");
    outputs.push_back(position_name + ".png");
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "extrapolation.gp", script.str(), outputs);
}

}  // namespace rung::plot
