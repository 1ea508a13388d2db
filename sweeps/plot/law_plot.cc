#include "sweeps/plot/law_plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "core/common/atomic_file.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

using fit::ChinchillaLaw;
using fit::LawFittedRun;
using fit::LawReport;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
// Runs whose grouping value lies within this relative spread of a group's first share the group (the
// IsoFLOP profiles' default tolerance).
constexpr double kGroupTolerance = 0.025;

// The baseline black, the other variants ColorBrewer Dark2 (as the ladder's figures).
const char* kBaselineColor = "#000000";
const std::vector<std::string> kColors = {"#d95f02", "#1b9e77", "#7570b3", "#e7298a",
                                          "#66a61e", "#e6ab02", "#a6761d", "#1f78b4"};
const std::vector<int> kPoints = {5, 9, 13, 11, 15, 4, 8, 12};

// A number of a data file: NaN where it does not exist.
std::string Num(double value) { return std::isfinite(value) ? Format("%.9g", value) : "NaN"; }

// A number in enhanced text at `digits` significant digits: 0.34, 1500, 2.5×10^{4}.
std::string Sci(double value, int digits = 2) {
  if (!std::isfinite(value)) return "n/a";
  if (value == 0) return "0";
  const std::string format = "%." + std::to_string(digits) + "g";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-2 && magnitude < 1e4) return Format(format.c_str(), value);
  int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
  double mantissa = value / std::pow(10.0, exponent);
  // 9.99 at two digits is 10: carry into the exponent.
  if (std::fabs(std::stod(Format(format.c_str(), mantissa))) >= 10) mantissa /= 10, ++exponent;
  const std::string power = "10^{" + std::to_string(exponent) + "}";
  const std::string shown = Format(format.c_str(), mantissa);
  return shown == "1" ? power : shown == "-1" ? "-" + power : shown + "×" + power;
}

// An integer colour of a "#rrggbb" (gnuplot's `lc rgb variable`).
long ColorValue(const std::string& color) { return std::stol(color.substr(1), nullptr, 16); }

// Dark to light as a group's value grows: viridis from dark purple to green, `index` of `count`.
std::string GroupColor(size_t index, size_t count) {
  static const double anchors[4][3] = {{0x44, 0x01, 0x54}, {0x3b, 0x52, 0x8b}, {0x21, 0x91, 0x8c}, {0x5e, 0xc9, 0x62}};
  const double t = count < 2 ? 0.5 : static_cast<double>(index) / static_cast<double>(count - 1);
  const double at = t * 3;
  const int low = std::min(2, static_cast<int>(std::floor(at)));
  const double fraction = at - low;
  char text[8];
  int rgb[3];
  for (int channel = 0; channel < 3; ++channel) {
    rgb[channel] = static_cast<int>(std::lround(anchors[low][channel] +
                                                (anchors[low + 1][channel] - anchors[low][channel]) * fraction));
  }
  std::snprintf(text, sizeof(text), "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return text;
}

struct VariantStyle {
  std::string name;
  std::string color;
  int point = 7;
};

// Each variant of the report in its order: the baseline a black disc, the others Dark2 and a mark each.
std::vector<VariantStyle> VariantStyles(const LawReport& report) {
  std::vector<VariantStyle> styles;
  size_t slot = 0;
  for (const fit::VariantLaw& variant : report.variants) {
    if (variant.variant == report.baseline) {
      styles.push_back({variant.variant, kBaselineColor, 7});
    } else {
      styles.push_back({variant.variant, kColors[slot % kColors.size()], kPoints[slot % kPoints.size()]});
      ++slot;
    }
  }
  return styles;
}

const VariantStyle& StyleOf(const std::vector<VariantStyle>& styles, const std::string& variant) {
  for (const VariantStyle& style : styles) {
    if (style.name == variant) return style;
  }
  static const VariantStyle fallback{"", "#555555", 7};
  return fallback;
}

// The variant as a figure names it, in enhanced text.
std::string VariantText(const std::string& variant) { return EnhancedLiteral(ReadableVariant(variant)); }

// What the loss is, as an axis says it.
std::string LossAxis(const LawReport& report) {
  if (report.metric.empty() || report.metric == "val_loss") return "validation loss L (" + report.unit + ")";
  if (report.metric == "val_bpb") return "validation loss L (bits per byte)";
  return EnhancedLiteral(report.metric) + " (" + report.unit + ")";
}

const char* kNAxis = "parameters N";
const char* kDAxis = "training tokens D";
const char* kComputeAxis = "training compute C = 6·N·D (FLOPs)";

// The law as a panel's subtitle says it.
std::string LawText(const fit::VariantLaw& variant, const std::string& unit) {
  const ChinchillaLaw& law = variant.law;
  return "E " + Sci(law.e, 3) + ", A " + Sci(law.a, 3) + ", α " + Sci(law.alpha, 3) + ", B " + Sci(law.b, 3) +
         ", β " + Sci(law.beta, 3) + "; RMSE " + Sci(variant.rmse, 2) + " " + unit + ", " +
         std::to_string(variant.points) + " runs";
}

// A figure as SVG then PNG: `body` (every setting and the plot or multiplot) run once per terminal.
std::string BothTerminals(const fs::path& dir, const std::string& name, const std::string& body, int width,
                          int height) {
  return "\n# " + name + "\nreset\n" + SvgTerminal(width, height) + "\nset output " +
         Quote((dir / (name + ".svg")).string()) + "\n" + body + "unset output\nreset\n" +
         PngTerminal(width, height) + "\nset output " + Quote((dir / (name + ".png")).string()) + "\n" + body +
         "unset output\n";
}

// `series` as one plot command, one series a line.
std::string PlotCommand(const std::vector<std::string>& series) {
  std::string command = "plot \\\n";
  for (size_t i = 0; i < series.size(); ++i) command += "  " + series[i] + (i + 1 < series.size() ? ", \\\n" : "\n");
  return command;
}

// Panels of a multiplot: up to two columns for up to four, three beyond.
struct Layout {
  int rows = 1, cols = 1;
};
Layout PanelLayout(size_t count) {
  Layout layout;
  layout.cols = count <= 1 ? 1 : count <= 4 ? 2 : 3;
  layout.rows = static_cast<int>((count + layout.cols - 1) / layout.cols);
  return layout;
}
// A figure of panels with their keys below them: a tenth taller per row than a single plot, and half
// a single plot's height a row beyond two.
int PanelHeight(const Layout& layout, int height) {
  return (layout.rows <= 2 ? height : height * layout.rows / 2) + height * layout.rows / 10;
}

// ---- Loss against N or D, the runs grouped by what they share --------------------------------------

enum class Axis { kN, kD };
enum class GroupKind { kCompute, kN, kD, kRatio };

double GroupValue(const LawFittedRun& run, GroupKind kind) {
  switch (kind) {
    case GroupKind::kCompute: return 6.0 * run.n * run.d;
    case GroupKind::kN: return run.n;
    case GroupKind::kD: return run.d;
    case GroupKind::kRatio: return run.d / run.n;
  }
  return kNaN;
}

struct Grouping {
  GroupKind kind = GroupKind::kCompute;
  std::vector<double> values;  // each group's geometric mean, ascending
  std::vector<size_t> of_run;  // the group of each of the report's runs
};

// Runs sorted by `kind`'s value, a new group where one exceeds its group's first by the tolerance.
Grouping GroupRuns(const std::vector<LawFittedRun>& runs, GroupKind kind) {
  Grouping grouping;
  grouping.kind = kind;
  grouping.of_run.assign(runs.size(), 0);
  std::vector<size_t> order(runs.size());
  for (size_t index = 0; index < order.size(); ++index) order[index] = index;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return GroupValue(runs[a], kind) < GroupValue(runs[b], kind); });
  std::vector<double> log_sums;
  std::vector<int> counts;
  double first = 0;
  for (size_t index : order) {
    const double value = GroupValue(runs[index], kind);
    if (log_sums.empty() || value > first * (1 + kGroupTolerance)) {
      log_sums.push_back(0);
      counts.push_back(0);
      first = value;
    }
    log_sums.back() += std::log(value);
    ++counts.back();
    grouping.of_run[index] = log_sums.size() - 1;
  }
  for (size_t group = 0; group < log_sums.size(); ++group) grouping.values.push_back(std::exp(log_sums[group] / counts[group]));
  return grouping;
}

// The grouping of the runs into the fewest groups among what a section along `axis` can hold fixed:
// C, the other of N and D, or D / N (ties: in that order).
Grouping ChooseGrouping(const std::vector<LawFittedRun>& runs, Axis axis) {
  std::vector<GroupKind> kinds = {GroupKind::kCompute, axis == Axis::kN ? GroupKind::kD : GroupKind::kN,
                                  GroupKind::kRatio};
  Grouping best = GroupRuns(runs, kinds.front());
  for (size_t index = 1; index < kinds.size(); ++index) {
    Grouping candidate = GroupRuns(runs, kinds[index]);
    if (candidate.values.size() < best.values.size()) best = std::move(candidate);
  }
  return best;
}

// "C = 10^{11} FLOPs", "D = 4.1×10^{6} tokens", "N = 2.5×10^{4}", "D/N = 20".
std::string GroupLabel(GroupKind kind, double value) {
  switch (kind) {
    case GroupKind::kCompute: return "C = " + Sci(value) + " FLOPs";
    case GroupKind::kN: return "N = " + Sci(value);
    case GroupKind::kD: return "D = " + Sci(value) + " tokens";
    case GroupKind::kRatio: return "D/N = " + Sci(value);
  }
  return "";
}

// What a figure's groups share, in its title.
std::string GroupingText(GroupKind kind) {
  switch (kind) {
    case GroupKind::kCompute: return "compute budget C = 6ND (IsoFLOP)";
    case GroupKind::kN: return "model size N";
    case GroupKind::kD: return "training tokens D";
    case GroupKind::kRatio: return "tokens per parameter D/N";
  }
  return "";
}

// (N, D) of the point at `x` on the section of the group of value `value` along `axis`.
std::pair<double, double> SectionPoint(Axis axis, GroupKind kind, double value, double x) {
  if (axis == Axis::kN) {
    switch (kind) {
      case GroupKind::kCompute: return {x, value / (6.0 * x)};
      case GroupKind::kD: return {x, value};
      case GroupKind::kRatio: return {x, value * x};
      case GroupKind::kN: break;
    }
  } else {
    switch (kind) {
      case GroupKind::kCompute: return {value / (6.0 * x), x};
      case GroupKind::kN: return {value, x};
      case GroupKind::kRatio: return {x / value, x};
      case GroupKind::kD: break;
    }
  }
  return {kNaN, kNaN};
}

// The x range of `values` (positive) widened by `factor` on each side of the log axis.
std::pair<double, double> LogRange(const std::vector<double>& values, double factor) {
  double low = kInf, high = 0;
  for (double value : values) {
    if (value > 0 && std::isfinite(value)) low = std::min(low, value), high = std::max(high, value);
  }
  if (!(high > 0)) return {1, 10};
  return {low / factor, high * factor};
}

// A y range over `values` with 6% of its span (at least `floor`) on each side.
std::pair<double, double> PaddedRange(const std::vector<double>& values, double floor) {
  double low = kInf, high = -kInf;
  for (double value : values) {
    if (std::isfinite(value)) low = std::min(low, value), high = std::max(high, value);
  }
  if (!(high >= low)) return {0, 1};
  const double pad = std::max(0.06 * (high - low), floor);
  return {low - pad, high + pad};
}

std::string YRange(const std::pair<double, double>& range) {
  return "set yrange [" + Num(range.first) + ":" + Num(range.second) + "]\n";
}

// What every panel and single plot shares: grid, border, the key inside at the top right.
const char* kFrame =
    "set grid xtics mxtics ytics lc rgb '#dddddd' lw 1, lc rgb '#eeeeee' lw 1\nset border lw 1.2\n"
    "set key inside right top opaque box lc rgb '#bbbbbb' spacing 1.2\n";
// A panel's key below it, two entries a row: the curves of a panel fill its corners.
const char* kKeyBelow = "set key outside below center horizontal maxcols 2 noopaque nobox spacing 1.1 height 1.5\n";
std::string XLabel(const std::string& text) { return "set xlabel " + DoubleQuote(text) + "\n"; }

// Figure 1 and 2: loss against N (or D) per variant, the runs by group, each group's section of the
// variant's law through them. Writes the figure's two data files; its script.
StatusOr<std::string> LossFigure(const LawReport& report, Axis axis, const fs::path& dir, const LawPlotOptions& options) {
  const std::string name = axis == Axis::kN ? "law_loss_vs_n" : "law_loss_vs_d";
  const Grouping grouping = ChooseGrouping(report.runs, axis);
  const auto x_of = [axis](const LawFittedRun& run) { return axis == Axis::kN ? run.n : run.d; };
  std::ostringstream points, sections;
  points << "# " << report.source << ": measured loss per run, one index per (variant, group of the runs with the same "
         << GroupingText(grouping.kind) << ")\n# " << (axis == Axis::kN ? "n d" : "d n") << " compute loss fitted\n";
  sections << "# the fitted L(N, D) of each variant along each group, one index per (variant, group)\n# "
           << (axis == Axis::kN ? "n d" : "d n") << " loss\n";
  std::vector<double> xs, ys;
  for (const LawFittedRun& run : report.runs) xs.push_back(x_of(run)), ys.push_back(run.loss);
  const std::pair<double, double> x_range = LogRange(xs, 1.5);
  const std::pair<double, double> y_range = PaddedRange(ys, 1e-3);
  const Layout layout = PanelLayout(report.variants.size());
  std::ostringstream body;
  body << "set encoding utf8\nset multiplot layout " << layout.rows << "," << layout.cols << " title "
       << DoubleQuote("Loss against " + std::string(axis == Axis::kN ? "model size N" : "training tokens D") +
                      ": the runs grouped by " + GroupingText(grouping.kind) +
                      "\n{/*0.8 points: measured runs; lines: the fitted L(N, D) = E + A/N^α + B/D^β along each "
                      "group (a section of the fitted surface)}")
       << " font ',17'\n";
  int index = 0;
  for (const fit::VariantLaw& variant : report.variants) {
    std::vector<std::string> series;
    for (size_t group = 0; group < grouping.values.size(); ++group) {
      std::vector<const LawFittedRun*> members;
      for (size_t run = 0; run < report.runs.size(); ++run) {
        if (report.runs[run].variant == variant.variant && grouping.of_run[run] == group) {
          members.push_back(&report.runs[run]);
        }
      }
      if (members.empty()) continue;
      std::sort(members.begin(), members.end(),
                [&](const LawFittedRun* a, const LawFittedRun* b) { return x_of(*a) < x_of(*b); });
      const std::string label = GroupLabel(grouping.kind, grouping.values[group]);
      points << "# " << variant.variant << " | " << label << "\n";
      std::vector<double> member_x;
      for (const LawFittedRun* run : members) {
        member_x.push_back(x_of(*run));
        points << Num(x_of(*run)) << " " << Num(axis == Axis::kN ? run->d : run->n) << " "
               << Num(6.0 * run->n * run->d) << " " << Num(run->loss) << " " << Num(run->fitted) << "\n";
      }
      points << "\n\n";
      sections << "# " << variant.variant << " | " << label << "\n";
      const auto [low, high] = LogRange(member_x, member_x.size() > 1 ? 1.2 : 1.5);
      for (int step = 0; step <= 60; ++step) {
        const double x = std::exp(std::log(low) + (std::log(high) - std::log(low)) * step / 60.0);
        const auto [n, d] = SectionPoint(axis, grouping.kind, grouping.values[group], x);
        sections << Num(x) << " " << Num(axis == Axis::kN ? d : n) << " " << Num(variant.law.Predict(n, d)) << "\n";
      }
      sections << "\n\n";
      const std::string color = Quote(GroupColor(group, grouping.values.size()));
      series.push_back(Quote((dir / (name + "_sections.dat")).string()) + " index " + std::to_string(index) +
                       " using 1:3 with lines lw 2 lc rgb " + color + " notitle");
      series.push_back(Quote((dir / (name + "_points.dat")).string()) + " index " + std::to_string(index) +
                       " using 1:4 with points pt 7 ps 1.4 lc rgb " + color + " title " + DoubleQuote(label));
      ++index;
    }
    series.push_back("NaN with lines lw 2 lc rgb '#555555' title 'fitted L(N, D)'");
    body << "set title " << DoubleQuote(VariantText(variant.variant) + "\n{/*0.75 " + LawText(variant, report.unit) + "}")
         << "\n" << kFrame << kKeyBelow << LogAxis("x", x_range.first, x_range.second) << YRange(y_range)
         << XLabel(std::string(axis == Axis::kN ? kNAxis : kDAxis) + " (log scale)") << "set ylabel "
         << DoubleQuote(LossAxis(report)) << "\n" << PlotCommand(series);
  }
  body << "unset multiplot\n";
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / (name + "_points.dat")).string(), {points.str()}));
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / (name + "_sections.dat")).string(), {sections.str()}));
  return BothTerminals(dir, name, body.str(), options.width, PanelHeight(layout, options.height));
}

// ---- IsoFLOP profiles ---------------------------------------------------------------------------

// The budget of `budgets` nearest `compute` in ln C, within twice the tolerance; budgets.size() if none.
size_t BudgetOf(const std::vector<fit::IsoflopBudget>& budgets, double compute, double tolerance) {
  size_t best = budgets.size();
  double distance = 2 * std::log1p(tolerance) + 1e-12;
  for (size_t index = 0; index < budgets.size(); ++index) {
    const double here = std::fabs(std::log(compute / budgets[index].compute));
    if (here <= distance) best = index, distance = here;
  }
  return best;
}

// A budget's reason for having no N*, short enough for a key (isoflop_profile.h says the long one).
std::string ShortWhy(const fit::IsoflopBudget& budget) {
  if (budget.why.find("not convex") != std::string::npos) return "not convex";
  if (budget.why.find("outside") != std::string::npos) return "minimum outside the sizes";
  if (budget.why.find("needs 3") != std::string::npos) return std::to_string(budget.sizes) + " size(s), a parabola needs 3";
  if (budget.why.find("failed") != std::string::npos) return "the parabola's fit failed";
  return budget.why;
}

// Figure 3: per variant each budget's runs, its parabola over the sizes it ran and its minimum N*.
StatusOr<std::string> IsoflopFigure(const LawReport& report, const fs::path& dir, const LawPlotOptions& options) {
  const fit::IsoflopReport& isoflop = *report.isoflop;
  // One colour per budget in every panel: the distinct budgets across variants, by compute.
  std::vector<double> budgets;
  for (const fit::IsoflopVariant& variant : isoflop.variants) {
    for (const fit::IsoflopBudget& budget : variant.budgets) {
      const bool known = std::any_of(budgets.begin(), budgets.end(), [&](double compute) {
        return std::fabs(std::log(compute / budget.compute)) <= std::log1p(isoflop.tolerance);
      });
      if (!known) budgets.push_back(budget.compute);
    }
  }
  std::sort(budgets.begin(), budgets.end());
  const auto color_of = [&](double compute) {
    size_t best = 0;
    for (size_t index = 1; index < budgets.size(); ++index) {
      if (std::fabs(std::log(compute / budgets[index])) < std::fabs(std::log(compute / budgets[best]))) best = index;
    }
    return GroupColor(best, budgets.size());
  };
  const std::string points_path = (dir / "isoflop_points.dat").string();
  const std::string parabolas_path = (dir / "isoflop_parabolas.dat").string();
  const std::string minima_path = (dir / "isoflop_minima.dat").string();
  std::ostringstream points, parabolas, minima;
  points << "# " << report.source << ": the runs of each IsoFLOP budget, one index per (variant, budget)\n"
         << "# n d compute loss\n";
  parabolas << "# each budget's fitted parabola L = c0 + c1 ln N + c2 (ln N)^2 over the sizes it ran, one index per "
               "(variant, budget with a parabola)\n# n loss\n";
  minima << "# each budget's minimum N* (bootstrap interval of N*: n_low n_high, NaN without one), one index per "
            "variant\n# compute n_opt loss_opt n_low n_high d_opt colour\n";
  std::vector<double> xs, ys;
  for (const LawFittedRun& run : report.runs) xs.push_back(run.n);
  const Layout layout = PanelLayout(isoflop.variants.size());
  std::ostringstream body;
  int point_index = 0, parabola_index = 0, minima_index = 0;
  std::ostringstream panels;
  for (const fit::IsoflopVariant& variant : isoflop.variants) {
    std::vector<std::string> series;
    std::vector<std::vector<const LawFittedRun*>> members(variant.budgets.size());
    for (const LawFittedRun& run : report.runs) {
      if (run.variant != variant.variant) continue;
      const size_t budget = BudgetOf(variant.budgets, 6.0 * run.n * run.d, isoflop.tolerance);
      if (budget < variant.budgets.size()) members[budget].push_back(&run);
    }
    minima << "# " << variant.variant << "\n";
    bool any_minimum = false, any_interval = false;
    for (size_t index = 0; index < variant.budgets.size(); ++index) {
      const fit::IsoflopBudget& budget = variant.budgets[index];
      const std::string color = color_of(budget.compute);
      std::sort(members[index].begin(), members[index].end(),
                [](const LawFittedRun* a, const LawFittedRun* b) { return a->n < b->n; });
      std::string label = "C = " + Sci(budget.compute) + ": ";
      if (budget.n_opt) {
        label += "N* = " + Sci(*budget.n_opt);
        if (budget.n_opt_low && budget.n_opt_high) label += " [" + Sci(*budget.n_opt_low) + ", " + Sci(*budget.n_opt_high) + "]";
      } else {
        label += "no N* (" + EnhancedLiteral(ShortWhy(budget)) + ")";
      }
      points << "# " << variant.variant << " | C = " << Num(budget.compute) << "\n";
      std::vector<double> sizes;
      for (const LawFittedRun* run : members[index]) {
        points << Num(run->n) << " " << Num(run->d) << " " << Num(6.0 * run->n * run->d) << " " << Num(run->loss) << "\n";
        sizes.push_back(run->n);
        ys.push_back(run->loss);
      }
      // gnuplot counts an index without data lines as none: a NaN line keeps the indices in step.
      if (sizes.empty()) points << "NaN NaN NaN NaN\n";
      points << "\n\n";
      series.push_back(Quote(points_path) + " index " + std::to_string(point_index++) +
                       " using 1:4 with points pt 7 ps 1.4 lc rgb " + Quote(color) + " title " + DoubleQuote(label));
      if (budget.parabola.size() == 3 && !sizes.empty()) {
        parabolas << "# " << variant.variant << " | C = " << Num(budget.compute) << "\n";
        const auto [low, high] = LogRange(sizes, 1.1);
        for (int step = 0; step <= 80; ++step) {
          const double x = std::log(low) + (std::log(high) - std::log(low)) * step / 80.0;
          const double loss = budget.parabola[0] + budget.parabola[1] * x + budget.parabola[2] * x * x;
          parabolas << Num(std::exp(x)) << " " << Num(loss) << "\n";
        }
        parabolas << "\n\n";
        series.push_back(Quote(parabolas_path) + " index " + std::to_string(parabola_index++) +
                         " using 1:2 with lines lw 2 lc rgb " + Quote(color) + " notitle");
      }
      if (budget.n_opt && budget.loss_opt) {
        any_minimum = true;
        any_interval = any_interval || (budget.n_opt_low && budget.n_opt_high);
        minima << Num(budget.compute) << " " << Num(*budget.n_opt) << " " << Num(*budget.loss_opt) << " "
               << Num(budget.n_opt_low.value_or(kNaN)) << " " << Num(budget.n_opt_high.value_or(kNaN)) << " "
               << Num(budget.d_opt.value_or(kNaN)) << " " << ColorValue(color) << "\n";
        ys.push_back(*budget.loss_opt);
      }
    }
    if (!any_minimum) minima << "NaN NaN NaN NaN NaN NaN 0\n";
    minima << "\n\n";
    if (any_interval) {  // the bars of the minima with an interval (NaN != NaN leaves the others out)
      series.push_back(Quote(minima_path) + " index " + std::to_string(minima_index) +
                       " using 2:($4 == $4 ? $3 : NaN):4:5:7 with xerrorbars pt 12 ps 2.6 lw 2 lc rgb variable notitle");
    }
    if (any_minimum) {
      series.push_back(Quote(minima_path) + " index " + std::to_string(minima_index) +
                       " using 2:3:7 with points pt 12 ps 2.6 lw 2 lc rgb variable notitle");
      series.push_back("NaN with points pt 12 ps 2.6 lw 2 lc rgb '#555555' title " +
                       DoubleQuote(std::string("minimum N*") +
                                   (any_interval ? ", bar: its " + Format("%.0f", 100 * report.level) +
                                                       "% bootstrap interval"
                                                 : " (no bootstrap interval)")));
    }
    ++minima_index;
    std::string subtitle;
    if (variant.a && variant.g) {
      subtitle = "N* = " + Sci(*variant.g, 3) + " C^{" + Sci(*variant.a, 3) + "}";
      if (variant.a_low && variant.a_high) subtitle += " (a in [" + Sci(*variant.a_low, 3) + ", " + Sci(*variant.a_high, 3) + "])";
    } else if (!variant.why.empty()) {
      subtitle = "no N* = G C^a: " + EnhancedLiteral(variant.why);
    }
    panels << "set title " << DoubleQuote(VariantText(variant.variant) + (subtitle.empty() ? "" : "\n{/*0.75 " + subtitle + "}"))
           << "\n" << PlotCommand(series);
  }
  const std::pair<double, double> x_range = LogRange(xs, 1.5);
  const std::string intervals = isoflop.construction.empty()
                                    ? "none" + (isoflop.intervals_why.empty() ? "" : " (" + isoflop.intervals_why + ")")
                                    : isoflop.construction + " over " + std::to_string(isoflop.units) + " " +
                                          isoflop.unit + ", " + std::to_string(isoflop.used) + " of " +
                                          std::to_string(isoflop.replicates) + " replicates";
  // One entry a row: a budget's entry says its N* or why it has none, too long for two a row.
  body << "set encoding utf8\n" << kFrame << kKeyBelow << "set key vertical maxrows " << budgets.size() + 1 << "\n"
       << LogAxis("x", x_range.first, x_range.second) << YRange(PaddedRange(ys, 1e-3)) << XLabel(std::string(kNAxis) + " (log scale)") << "set ylabel "
       << DoubleQuote(LossAxis(report)) << "\nset multiplot layout " << layout.rows << ","
       << layout.cols << " title "
       << DoubleQuote("IsoFLOP profiles: loss against N at a fixed compute budget C = 6ND\n{/*0.8 lines: a parabola in "
                      "ln N per budget (Huber), over the sizes it ran; diamonds: its minimum N*}\n{/*0.8 N* intervals: " +
                      EnhancedLiteral(intervals) + "}")
       << " font ',17'\n" << panels.str() << "unset multiplot\n";
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(points_path, {points.str()}));
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(parabolas_path, {parabolas.str()}));
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(minima_path, {minima.str()}));
  return BothTerminals(dir, "isoflop", body.str(), options.width, PanelHeight(layout, options.height));
}

// ---- Predicted multipliers ------------------------------------------------------------------------

// Figure 4: the predicted CM against compute per variant and allocation, the band of its interval, the
// extrapolated computes shaded, the measured multipliers over them.
StatusOr<std::string> MultiplierFigure(const LawReport& report, const std::vector<VariantStyle>& styles,
                                       const fs::path& dir, const LawPlotOptions& options) {
  const std::string path = (dir / "law_multipliers.dat").string();
  const std::string measured_path = (dir / "law_multipliers_measured.dat").string();
  std::ostringstream data, measured;
  data << "# " << report.source << ": compute multipliers against " << report.baseline
       << " predicted by the fitted laws, one index per (variant, allocation)\n"
       << "# compute cm low high extrapolated n d loss\n";
  measured << "# measured compute multipliers against " << report.baseline << ", one index per variant\n"
           << "# compute cm low high\n";
  std::vector<double> computes, values = {1.0};
  std::vector<std::string> bands, lines;
  int index = 0;
  for (const VariantStyle& style : styles) {
    for (const char* allocation : {"rule", "optimal"}) {
      std::vector<const fit::PredictedMultiplier*> rows;
      for (const fit::PredictedMultiplier& row : report.multipliers) {
        if (row.variant == style.name && row.allocation == allocation) rows.push_back(&row);
      }
      if (rows.empty()) continue;
      std::sort(rows.begin(), rows.end(),
                [](const fit::PredictedMultiplier* a, const fit::PredictedMultiplier* b) { return a->compute < b->compute; });
      data << "# " << style.name << " | " << allocation << "\n";
      bool any_value = false, any_interval = false;
      for (const fit::PredictedMultiplier* row : rows) {
        const double cm = row->multiplier.value_or(kNaN);
        const double low = row->interval ? row->interval->low : kNaN;
        const double high = row->interval ? row->interval->high : kNaN;
        data << Num(row->compute) << " " << Num(cm) << " " << Num(low) << " " << Num(high) << " "
             << (row->extrapolated ? 1 : 0) << " " << Num(row->n) << " " << Num(row->d) << " " << Num(row->loss) << "\n";
        computes.push_back(row->compute);
        for (double value : {cm, low, high}) {
          if (std::isfinite(value) && value > 0) values.push_back(value);
        }
        any_value = any_value || row->multiplier.has_value();
        any_interval = any_interval || row->interval.has_value();
      }
      data << "\n\n";
      const bool rule = std::string(allocation) == "rule";
      const std::string source = Quote(path) + " index " + std::to_string(index);
      const std::string title =
          VariantText(style.name) + (rule ? ", D = " + Sci(report.tokens_per_param) + " N" : ", compute-optimal N, D");
      if (any_interval) {
        // The rule's band shaded, the optimum's hatched: where they overlap both stay readable.
        bands.push_back(source + " using 1:3:4 with filledcurves fc rgb " + Quote(style.color) +
                        (rule ? " fs transparent solid 0.22 noborder" : " fs transparent pattern 4 noborder") +
                        " notitle");
      }
      if (any_value) {
        lines.push_back(source + " using 1:2 with linespoints lw 2.5 dt " + (rule ? "1" : "2") + " pt " +
                        (rule ? std::to_string(style.point) : "6") + " ps 1.1 lc rgb " + Quote(style.color) +
                        " title " + DoubleQuote(title));
      }
      ++index;
    }
  }
  std::map<std::string, std::vector<const MeasuredMultiplier*>> by_variant;
  for (const MeasuredMultiplier& point : options.measured) {
    if (point.compute > 0 && std::isfinite(point.multiplier)) by_variant[point.variant].push_back(&point);
  }
  int measured_index = 0;
  for (const VariantStyle& style : styles) {
    auto found = by_variant.find(style.name);
    if (found == by_variant.end()) continue;
    measured << "# " << style.name << "\n";
    std::string estimators;
    for (const MeasuredMultiplier* point : found->second) {
      measured << Num(point->compute) << " " << Num(point->multiplier) << " " << Num(point->low.value_or(point->multiplier))
               << " " << Num(point->high.value_or(point->multiplier)) << "\n";
      computes.push_back(point->compute);
      for (double value : {point->multiplier, point->low.value_or(kNaN), point->high.value_or(kNaN)}) {
        if (std::isfinite(value) && value > 0) values.push_back(value);
      }
      if (!point->estimator.empty() && estimators.find(point->estimator) == std::string::npos) {
        estimators += (estimators.empty() ? "" : ", ") + point->estimator;
      }
    }
    measured << "\n\n";
    lines.push_back(Quote(measured_path) + " index " + std::to_string(measured_index++) +
                    " using 1:2:3:4 with yerrorbars pt 7 ps 1.6 lw 2 lc rgb " + Quote(style.color) + " title " +
                    DoubleQuote(VariantText(style.name) + " measured" +
                                (estimators.empty() ? "" : " (" + EnhancedLiteral(estimators) + ")")));
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(path, {data.str()}));
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(measured_path, {measured.str()}));
  double largest = 0;
  for (const LawFittedRun& run : report.runs) largest = std::max(largest, 6.0 * run.n * run.d);
  const std::pair<double, double> x_range = LogRange(computes, 1.4);
  const double cm_low = *std::min_element(values.begin(), values.end());
  const double cm_high = *std::max_element(values.begin(), values.end());
  const fit::IntervalBasis& basis = report.prediction_basis;
  const std::string bands_text =
      basis.construction.empty()
          ? "no intervals" + (basis.why.empty() ? "" : ": " + basis.why)
          : "bands: " + Format("%.0f", 100 * report.level) + "% " + basis.construction + " intervals, " +
                std::to_string(basis.used) + " of " + std::to_string(basis.replicates) + " replicates";
  const std::string baseline = VariantText(report.baseline);
  std::ostringstream body;
  body << "set encoding utf8\n" << LogAxis("x", x_range.first, x_range.second);
  if (cm_high / cm_low > 3) {
    body << LogAxis("y", cm_low / 1.15, cm_high * 1.15);
  } else {
    body << YRange(PaddedRange(values, 0.01));
  }
  body << "set grid xtics mxtics ytics lc rgb '#dddddd' lw 1, lc rgb '#eeeeee' lw 1\nset border lw 1.2\n"
       << "set key outside below center horizontal maxcols 2 spacing 1.2 height 1\nset xlabel " << DoubleQuote(kComputeAxis)
       << "\nset ylabel " << DoubleQuote("compute multiplier CM = C_{" + baseline + "}(L) / C") << "\nset title "
       << DoubleQuote("Compute multiplier against " + baseline + " predicted by the fitted L(N, D)\n{/*0.8 CM > 1: the "
                      "variant needs less compute for the same loss; solid: D = " + Sci(report.tokens_per_param) +
                      " N; dashed: each law's compute-optimal N, D}\n{/*0.8 " + EnhancedLiteral(bands_text) +
                      (basis.construction.empty() ? std::string()
                                                  : " (shaded: D = " + Sci(report.tokens_per_param) + " N; hatched: optimal)") +
                      "}")
       << "\n";
  if (largest > 0 && largest < x_range.second) {
    body << "set object 1 rect from first " << Num(largest) << ", graph 0 to graph 1, graph 1 behind fc rgb '#f1f1f1' "
         << "fillstyle solid 1.0 noborder\nset arrow 1 from first " << Num(largest) << ", graph 0 to first "
         << Num(largest) << ", graph 1 nohead back dt 3 lw 1.5 lc rgb '#777777'\nset label 1 "
         << DoubleQuote("extrapolated:\nC > " + Sci(largest) + ", the largest run")
         << " at first " << Num(largest) << ", graph 0.93 left offset 0.6,0 tc rgb '#555555'\n";
  }
  body << "set arrow 2 from graph 0, first 1 to graph 1, first 1 nohead back lc rgb '#000000' lw 1.5 dt 2\n"
       << "set label 2 " << DoubleQuote(baseline + " (CM = 1)")
       << " at graph 0.01, first 1 offset 0,0.7 back tc rgb '#000000'\n";
  std::vector<std::string> series = bands;
  series.insert(series.end(), lines.begin(), lines.end());
  body << PlotCommand(series);
  return BothTerminals(dir, "law_multipliers", body.str(), options.width, options.height);
}

// ---- Residuals and rollout ------------------------------------------------------------------------

// Figure 5: ln L - ln L_fitted per run against N, per variant.
StatusOr<std::string> ResidualFigure(const LawReport& report, const std::vector<VariantStyle>& styles,
                                     const fs::path& dir, const LawPlotOptions& options) {
  const std::string path = (dir / "law_residuals.dat").string();
  std::ostringstream data;
  data << "# " << report.source << ": residuals of the fitted L(N, D), one index per variant\n"
       << "# n d loss fitted residual_ln (ln loss - ln fitted)\n";
  std::vector<double> xs, residuals;
  std::vector<std::string> series;
  int index = 0;
  for (const fit::VariantLaw& variant : report.variants) {
    const VariantStyle& style = StyleOf(styles, variant.variant);
    data << "# " << variant.variant << "\n";
    for (const LawFittedRun& run : report.runs) {
      if (run.variant != variant.variant) continue;
      const double residual = std::log(run.loss) - std::log(run.fitted);
      data << Num(run.n) << " " << Num(run.d) << " " << Num(run.loss) << " " << Num(run.fitted) << " " << Num(residual)
           << "\n";
      xs.push_back(run.n);
      residuals.push_back(std::fabs(residual));
    }
    data << "\n\n";
    series.push_back(Quote(path) + " index " + std::to_string(index++) + " using 1:5 with points pt " +
                     std::to_string(style.point) + " ps 1.5 lc rgb " + Quote(style.color) + " title " +
                     DoubleQuote(VariantText(variant.variant) + " (RMSE " + Sci(variant.rmse) + " " + report.unit +
                                 ", " + std::to_string(variant.points) + " runs)"));
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(path, {data.str()}));
  const std::pair<double, double> x_range = LogRange(xs, 1.5);
  double reach = 1e-4;
  for (double residual : residuals) {
    if (std::isfinite(residual)) reach = std::max(reach, residual);
  }
  std::ostringstream body;
  body << "set encoding utf8\n" << kFrame << kKeyBelow << LogAxis("x", x_range.first, x_range.second) << "set yrange ["
       << Num(-1.25 * reach) << ":" << Num(1.25 * reach) << "]\nset xlabel "
       << DoubleQuote(std::string(kNAxis) + " (log scale)")
       << "\nset ylabel 'residual ln L - ln L_{fit}  (0.01 ≈ 1% of the loss)'\nset title "
       << DoubleQuote("Residuals of the fitted L(N, D) = E + A/N^α + B/D^β per run\n{/*0.8 " +
                      EnhancedLiteral(report.source) + "; above 0: the run's loss is higher than the law's}")
       << "\nset arrow 1 from graph 0, first 0 to graph 1, first 0 nohead back lc rgb '#000000' lw 1.5 dt 2\n"
       << PlotCommand(series);
  return BothTerminals(dir, "law_residuals", body.str(), options.width, options.height);
}

// Figure 6: the rollout's predicted loss against the measured per held-out run, y = x.
StatusOr<std::string> RolloutFigure(const LawReport& report, const std::vector<VariantStyle>& styles,
                                    const fs::path& dir, const LawPlotOptions& options) {
  const fit::Rollout& rollout = *report.rollout;
  const std::string path = (dir / "law_rollout.dat").string();
  std::ostringstream data;
  data << "# " << report.source << ": the rollout (a fit without the largest sizes) predicting the held-out runs, "
       << "one index per variant\n# measured predicted low high n d\n";
  std::vector<double> values;
  std::vector<std::string> series;
  int index = 0;
  for (const VariantStyle& style : styles) {
    std::vector<const fit::RolloutPoint*> points;
    for (const fit::RolloutPoint& point : rollout.points) {
      if (point.variant == style.name) points.push_back(&point);
    }
    if (points.empty()) continue;
    data << "# " << style.name << "\n";
    bool any_interval = false;
    for (const fit::RolloutPoint* point : points) {
      const double low = point->interval ? point->interval->low : kNaN;
      const double high = point->interval ? point->interval->high : kNaN;
      data << Num(point->loss) << " " << Num(point->predicted) << " " << Num(low) << " " << Num(high) << " "
           << Num(point->n) << " " << Num(point->d) << "\n";
      for (double value : {point->loss, point->predicted, low, high}) values.push_back(value);
      any_interval = any_interval || point->interval.has_value();
    }
    data << "\n\n";
    const std::string source = Quote(path) + " index " + std::to_string(index++);
    if (any_interval) {
      series.push_back(source + " using 1:2:3:4 with yerrorbars pt " + std::to_string(style.point) +
                       " ps 1.6 lw 2 lc rgb " + Quote(style.color) + " notitle");
    }
    series.push_back(source + " using 1:2 with points pt " + std::to_string(style.point) + " ps 1.6 lc rgb " +
                     Quote(style.color) + " title " + DoubleQuote(VariantText(style.name)));
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(path, {data.str()}));
  const std::pair<double, double> range = PaddedRange(values, 1e-3);
  std::string sizes;
  for (double n : rollout.held_out_n) sizes += (sizes.empty() ? "" : ", ") + Sci(n, 3);
  const std::string bars =
      rollout.basis.construction.empty()
          ? "no prediction intervals" + (rollout.basis.why.empty() ? "" : ": " + EnhancedLiteral(rollout.basis.why))
          : "bars: " + Format("%.0f", 100 * report.level) + "% prediction intervals (" +
                EnhancedLiteral(rollout.basis.construction) + "); " + std::to_string(rollout.inside) + " of " +
                std::to_string(rollout.points.size()) + " measured losses inside";
  series.push_back("x with lines dt 2 lw 1.5 lc rgb '#000000' title 'y = x (perfect prediction)'");
  std::ostringstream body;
  body << "set encoding utf8\n" << kFrame << "set key inside left top opaque box lc rgb '#bbbbbb' spacing 1.2\n"
       << "set size square\nset xrange [" << Num(range.first) << ":" << Num(range.second) << "]\n" << YRange(range)
       << "set xlabel " << DoubleQuote("measured " + LossAxis(report)) << "\nset ylabel "
       << DoubleQuote("predicted " + LossAxis(report)) << "\nset title "
       << DoubleQuote("Rollout: the fit without N = " + sizes + " predicting those runs\n{/*0.8 " + bars +
                      "; mean |predicted - measured| " + Sci(rollout.mean_abs_error) + " " + report.unit + " (" +
                      Format("%.2g", 100 * rollout.mean_relative_error) + "%)}")
       << "\n" << PlotCommand(series);
  return BothTerminals(dir, "law_rollout", body.str(), options.width, options.height);
}

}  // namespace

std::vector<MeasuredMultiplier> MeasuredMultipliersOf(const fit::MultiplierReport& report) {
  const bool hermite = std::any_of(report.rows.begin(), report.rows.end(), [&](const fit::MultiplierRow& row) {
    return row.estimator == fit::Estimator::kHermite && row.variant != report.baseline && row.multiplier;
  });
  const fit::Estimator estimator = hermite ? fit::Estimator::kHermite : fit::Estimator::kPiecewise;
  std::vector<MeasuredMultiplier> points;
  for (const fit::MultiplierRow& row : report.rows) {
    if (row.estimator != estimator || row.variant == report.baseline || !row.multiplier) continue;
    MeasuredMultiplier point;
    point.variant = row.variant;
    point.compute = row.compute;
    point.multiplier = *row.multiplier;
    if (row.interval) point.low = row.interval->low, point.high = row.interval->high;
    point.estimator = fit::EstimatorName(estimator);
    points.push_back(point);
  }
  return points;
}

StatusOr<std::vector<std::string>> WriteLawFigures(const fit::LawReport& report, const LawPlotOptions& options) {
  if (report.runs.empty() || report.variants.empty()) {
    return Status::InvalidArgument("the law report has no fitted run to draw");
  }
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  const std::vector<VariantStyle> styles = VariantStyles(report);
  std::string script = "# rung laws: the figures of " + report.source +
                       "\n# Redraw with: gnuplot laws.gp (paths are absolute)\nset encoding utf8\n";
  std::vector<std::string> names = {"law_loss_vs_n", "law_loss_vs_d"};
  RUNG_ASSIGN_OR_RETURN(std::string loss_n, LossFigure(report, Axis::kN, dir, options));
  RUNG_ASSIGN_OR_RETURN(std::string loss_d, LossFigure(report, Axis::kD, dir, options));
  script += loss_n + loss_d;
  const bool isoflop = report.isoflop && std::any_of(report.isoflop->variants.begin(), report.isoflop->variants.end(),
                                                     [](const fit::IsoflopVariant& variant) { return !variant.budgets.empty(); });
  if (isoflop) {
    RUNG_ASSIGN_OR_RETURN(std::string figure, IsoflopFigure(report, dir, options));
    script += figure;
    names.push_back("isoflop");
  }
  if (!report.multipliers.empty()) {
    RUNG_ASSIGN_OR_RETURN(std::string figure, MultiplierFigure(report, styles, dir, options));
    script += figure;
    names.push_back("law_multipliers");
  }
  RUNG_ASSIGN_OR_RETURN(std::string residuals, ResidualFigure(report, styles, dir, options));
  script += residuals;
  names.push_back("law_residuals");
  if (report.rollout && !report.rollout->points.empty()) {
    RUNG_ASSIGN_OR_RETURN(std::string figure, RolloutFigure(report, styles, dir, options));
    script += figure;
    names.push_back("law_rollout");
  }
  std::vector<std::string> outputs;
  for (const std::string& name : names) {
    outputs.push_back(name + ".svg");
    outputs.push_back(name + ".png");
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "laws.gp", script, outputs);
}

}  // namespace rung::plot
