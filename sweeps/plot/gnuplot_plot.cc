#include "sweeps/plot/gnuplot_plot.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "core/common/atomic_file.h"
#include "sweeps/fit/report_format.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::fit {
namespace {

namespace fs = std::filesystem;

// The baseline black, then ColorBrewer Dark2 (distinct in colour and in grey).
const char* kBaselineColor = "#000000";
const std::vector<std::string> kColors = {"#d95f02", "#1b9e77", "#7570b3", "#e7298a",
                                          "#66a61e", "#e6ab02", "#a6761d", "#1f78b4"};
// Variants differ from the baseline (a large black disc, solid line, drawn first) in mark and dash
// too, and are drawn over it: a variant that coincides with the baseline stays visible on top of it.
const std::vector<int> kPoints = {5, 9, 13, 11, 15, 4, 8, 12};  // square, triangle, diamond, ...
const std::vector<int> kDashes = {2, 4, 5, 3, 2, 4, 5, 3};

using plot::Quote;
std::string Fmt(const char* format, double value) { return plot::Format(format, value); }
std::string DQuote(const std::string& text) { return plot::DoubleQuote(text); }
std::string Enh(const std::string& text) { return plot::EnhancedLiteral(text); }

// A double-quoted field of a gnuplot data file.
std::string DataString(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? '\'' : c;
  return quoted + "\"";
}

Status WriteFile(const fs::path& path, const std::string& text) { return WriteFileAtomically(path.string(), {text}); }

// A multiplier at the decimals that show how far it is from 1, the baseline's (2 to 4): x1.09, x1.003,
// x1.0001, never x1.00 for a multiplier that differs in the third decimal.
std::string MultiplierLabel(double multiplier) {
  const double distance = std::fabs(multiplier - 1);
  const int decimals = distance > 0 ? std::clamp(static_cast<int>(std::ceil(-std::log10(distance) - 1e-9)), 2, 4) : 2;
  return plot::Format(("%." + std::to_string(decimals) + "f").c_str(), multiplier);
}

struct VariantStyle {
  std::string name;
  std::string color;
  bool baseline = false;
  int point = 7;  // gnuplot point type
  int dash = 1;   // gnuplot dash type of its fitted curve
  // The options of its points and of its lines.
  std::string Points() const {
    return "lc rgb " + Quote(color) + " pt " + std::to_string(point) + (baseline ? " ps 2.0" : " ps 1.3");
  }
  std::string Lines() const {
    return "lc rgb " + Quote(color) + " dt " + std::to_string(dash) + (baseline ? " lw 3" : " lw 2");
  }
};

// The style of each variant, in the report's order: the baseline's black disc and solid line, every
// other variant the colour, mark and dash of its slot.
std::vector<VariantStyle> VariantStyles(const MultiplierReport& report) {
  std::vector<VariantStyle> styles;
  for (size_t index = 0; index < report.variants.size(); ++index) {
    const bool baseline = report.variants[index] == report.baseline;
    const size_t slot = (index + kColors.size() - 1) % kColors.size();
    styles.push_back({report.variants[index], baseline ? kBaselineColor : kColors[slot], baseline,
                      baseline ? 7 : kPoints[slot % kPoints.size()], baseline ? 1 : kDashes[slot % kDashes.size()]});
  }
  return styles;
}

// The fitted curves drawn, one per variant at most.
struct CurveFits {
  std::map<std::string, const PowerLawFit*> by_variant;        // into the report's fits
  std::string kind;                                            // the first curve's mode: "shared", "free" or ""
  double shared_e = std::numeric_limits<double>::quiet_NaN();  // the E of the report's last shared fit
};

// The fitted curve per variant: shared E, or free E where the shared fit is missing.
CurveFits FittedCurves(const MultiplierReport& report) {
  CurveFits fits;
  for (EMode mode : {EMode::kShared, EMode::kFree}) {
    for (const FitSummary& summary : report.fits) {
      if (summary.mode == mode && summary.fit && !fits.by_variant.count(summary.variant)) {
        fits.by_variant[summary.variant] = &*summary.fit;
        if (fits.kind.empty()) fits.kind = mode == EMode::kShared ? "shared" : "free";
      }
    }
  }
  for (const FitSummary& summary : report.fits) {
    if (summary.mode == EMode::kShared && summary.fit) fits.shared_e = summary.fit->law.e;
  }
  return fits;
}

// The ranges of the loss figure: compute (x, log) and the value of the points and curves (y).
struct Ranges {
  double x_lo = 0, x_hi = 0;
  double y_lo = 0, y_hi = 0;
};

// (compute, value) of `law` at step `step` of 0..200, evenly spaced in ln C across [x_lo, x_hi].
std::pair<double, double> CurveAt(const PowerLaw& law, const Ranges& ranges, int step) {
  double compute = std::exp(std::log(ranges.x_lo) + (std::log(ranges.x_hi) - std::log(ranges.x_lo)) * step / 200.0);
  return std::make_pair(compute, law.Predict(compute));
}

// The ranges: x leaves room right of the last points for their labels and the fitted curves span it; y
// holds the piecewise points with their bars and the curves, padded. INVALID_ARGUMENT without a point.
StatusOr<Ranges> PlotRanges(const MultiplierReport& report, const CurveFits& fits) {
  double c_min = std::numeric_limits<double>::infinity(), c_max = 0;
  for (const MultiplierRow& row : report.rows) {
    c_min = std::min(c_min, row.compute);
    c_max = std::max(c_max, row.compute);
  }
  if (!(c_max > 0)) return Status::InvalidArgument("the report has no ladder points to plot");
  Ranges ranges;
  ranges.x_lo = c_min / 1.6;
  ranges.x_hi = c_max * 2.5;
  double y_lo = std::numeric_limits<double>::infinity(), y_hi = -y_lo;
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator != Estimator::kPiecewise) continue;
    y_lo = std::min(y_lo, row.loss - row.loss_sd);
    y_hi = std::max(y_hi, row.loss + row.loss_sd);
  }
  for (const auto& [variant, fit] : fits.by_variant) {
    for (int step = 0; step <= 200; ++step) {
      double loss = CurveAt(fit->law, ranges, step).second;
      y_lo = std::min(y_lo, loss);
      y_hi = std::max(y_hi, loss);
    }
  }
  const double pad = 0.04 * std::max(y_hi - y_lo, 1e-6);
  ranges.y_lo = y_lo - pad;
  ranges.y_hi = y_hi + pad;
  return ranges;
}

// Label heights: at each compute the labels of the variants (the baseline's too with one ladder point),
// in loss order, at least 4.5% of the y range apart (about a line of text), centred on their points.
std::map<const MultiplierRow*, double> LabelHeights(const MultiplierReport& report, const Ranges& ranges) {
  std::map<const MultiplierRow*, double> label_y;
  const double gap = 0.045 * (ranges.y_hi - ranges.y_lo);
  std::map<double, std::vector<const MultiplierRow*>> by_compute;
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator == Estimator::kPiecewise && (row.variant != report.baseline || report.ladder_points < 2))
      by_compute[row.compute].push_back(&row);
  }
  for (auto& [compute, rows] : by_compute) {
    std::sort(rows.begin(), rows.end(),
              [](const MultiplierRow* a, const MultiplierRow* b) { return a->loss < b->loss; });
    std::vector<double> y;
    for (const MultiplierRow* row : rows) y.push_back(row->loss);
    for (size_t index = 1; index < y.size(); ++index) y[index] = std::max(y[index], y[index - 1] + gap);
    double shift = 0;
    for (size_t index = 0; index < y.size(); ++index) shift += (y[index] - rows[index]->loss) / y.size();
    for (size_t index = 0; index < y.size(); ++index) label_y[rows[index]] = y[index] - shift;
  }
  return label_y;
}

// The printf format of a loss label (with one ladder point there is no multiplier: each variant is
// labelled with its loss), at the decimals that tell the piecewise losses apart.
std::string LossLabelFormat(const MultiplierReport& report) {
  std::vector<double> losses;
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator == Estimator::kPiecewise) losses.push_back(row.loss);
  }
  return "%." + std::to_string(plot::DecimalsToDistinguish(losses, 3, 5)) + "f";
}

// What every figure reads: the report and options, the output folder, the variants' styles, the
// curves, the ranges and where the points' labels go.
struct Figures {
  const MultiplierReport& report;
  const PlotOptions& options;
  fs::path dir;                      // absolute
  std::vector<VariantStyle> styles;  // in the report's order of variants
  CurveFits fits;
  Ranges ranges;
  std::map<const MultiplierRow*, double> label_y;  // LabelHeights: the height of each labelled row's label
  std::string label_format;                        // LossLabelFormat
  bool seeds = false;                              // some point is a mean over seeds
  bool one_point = false;                          // one ladder point: no curve, no multiplier

  // The quoted absolute path of the file `name` in the output folder.
  std::string Path(const char* name) const { return Quote((dir / name).string()); }
};

// The data files' text, and what the multiplier figure needs to know of them.
struct FigureData {
  std::string points, curves, multipliers, predicted;
  double cm_lo = std::numeric_limits<double>::infinity(), cm_hi = 0;  // finite positive multipliers and bars
  std::set<std::string> drawn_piecewise, drawn_shared;                 // variants with a finite value of each
  // (variant, allocation) of the predicted rows with a multiplier, and of those with an interval.
  std::set<std::pair<std::string, std::string>> drawn_predicted, predicted_bands;
  double predicted_c_hi = 0;  // the largest compute of a drawn predicted row
};

// The allocations of the predicted multipliers, in the order of predicted.dat's indices per variant.
const char* const kAllocations[] = {"rule", "optimal"};

// A variant's block of predicted.dat for one allocation: compute, CM, low, high, extrapolated (NaN
// where a row has no multiplier or no interval; one NaN line without rows), counted into the
// multipliers' range.
std::string PredictedLines(const MultiplierReport& report, const std::string& variant, const std::string& allocation,
                           FigureData* data) {
  std::vector<const PredictedMultiplier*> rows;
  for (const PredictedMultiplier& row : report.predicted) {
    if (row.variant == variant && row.allocation == allocation) rows.push_back(&row);
  }
  std::sort(rows.begin(), rows.end(),
            [](const PredictedMultiplier* a, const PredictedMultiplier* b) { return a->compute < b->compute; });
  std::string lines;
  for (const PredictedMultiplier* row : rows) {
    const double value = row->multiplier.value_or(std::nan(""));
    const double low = row->interval ? row->interval->low : std::nan("");
    const double high = row->interval ? row->interval->high : std::nan("");
    if (row->multiplier) {
      data->drawn_predicted.insert({variant, allocation});
      data->predicted_c_hi = std::max(data->predicted_c_hi, row->compute);
    }
    if (row->interval) data->predicted_bands.insert({variant, allocation});
    for (double seen : {value, low, high}) {
      if (std::isfinite(seen) && seen > 0) {
        data->cm_lo = std::min(data->cm_lo, seen);
        data->cm_hi = std::max(data->cm_hi, seen);
      }
    }
    lines += Fmt("%.6e", row->compute) + " " + Fmt("%.6f", value) + " " + Fmt("%.6f", low) + " " + Fmt("%.6f", high) +
             " " + (row->extrapolated ? "1" : "0") + "\n";
  }
  // gnuplot counts an index without data lines as none: a NaN line keeps the indices in step.
  return lines.empty() ? "NaN NaN NaN NaN 0\n" : lines;
}

// The text beside a point: the multiplier (none for the baseline), or with one ladder point the loss.
std::string PointLabel(const Figures& figures, const VariantStyle& style, const MultiplierRow& row) {
  std::string cm = row.multiplier ? "×" + MultiplierLabel(*row.multiplier) : "undefined";
  if (figures.one_point) cm = Fmt(figures.label_format.c_str(), row.loss);
  else if (style.baseline) cm = "";
  return cm;
}

// A piecewise row's line of points.dat: compute, loss, sd, label, the text beside it and its height.
std::string PointLine(const Figures& figures, const VariantStyle& style, const MultiplierRow& row) {
  auto y = figures.label_y.find(&row);
  std::ostringstream line;
  line << Fmt("%.6e", row.compute) << " " << Fmt("%.6f", row.loss) << " " << Fmt("%.6f", row.loss_sd) << " "
       << DataString(row.label) << " " << DataString(PointLabel(figures, style, row)) << " "
       << Fmt("%.6f", y == figures.label_y.end() ? row.loss : y->second) << "\n";
  return line.str();
}

// A piecewise row's line of multipliers.dat (compute, multiplier, its bar, the shared-E multiplier at the
// same point), counted into the multipliers' range and the variants drawn.
std::string MultiplierLine(const MultiplierReport& report, const MultiplierRow& row, FigureData* data) {
  // Error bars of the multiplier: the bootstrap interval, else mean +- sd of the paired ones.
  double value = row.multiplier.value_or(std::nan(""));
  double low = value, high = value;
  if (row.interval) {
    low = row.interval->low;
    high = row.interval->high;
  } else if (row.paired_multiplier && row.paired_multiplier->n > 1) {
    low = value - row.paired_multiplier->sd;
    high = value + row.paired_multiplier->sd;
  }
  double shared = std::nan("");
  for (const MultiplierRow& other : report.rows) {
    if (other.variant == row.variant && other.label == row.label &&
        other.estimator == Estimator::kPowerLawSharedE && other.multiplier) {
      shared = *other.multiplier;
    }
  }
  if (std::isfinite(value)) data->drawn_piecewise.insert(row.variant);
  if (std::isfinite(shared)) data->drawn_shared.insert(row.variant);
  for (double value_seen : {low, high, shared}) {
    if (std::isfinite(value_seen) && value_seen > 0) {
      data->cm_lo = std::min(data->cm_lo, value_seen);
      data->cm_hi = std::max(data->cm_hi, value_seen);
    }
  }
  return Fmt("%.6e", row.compute) + " " + Fmt("%.6f", value) + " " + Fmt("%.6f", low) + " " + Fmt("%.6f", high) +
         " " + Fmt("%.6f", shared) + "\n";
}

// A variant's block of curves.dat: its fitted curve across the x range, or a NaN point without one.
std::string CurveLines(const Figures& figures, const VariantStyle& style) {
  auto fit = figures.fits.by_variant.find(style.name);
  if (fit == figures.fits.by_variant.end()) return "NaN NaN\n";
  std::string lines;
  for (int step = 0; step <= 200; ++step) {
    auto [compute, loss] = CurveAt(fit->second->law, figures.ranges, step);
    lines += Fmt("%.6e", compute) + " " + Fmt("%.6f", loss) + "\n";
  }
  return lines;
}

// points.dat, curves.dat and multipliers.dat: a header, then one index per variant in the styles' order.
FigureData DataOf(const Figures& figures) {
  const MultiplierReport& report = figures.report;
  std::ostringstream points, curves, multipliers;
  points << "# " << report.source << ": seed-mean loss per variant (one index per variant, in key order)\n"
         << "# compute_flops loss_nats loss_sd label piecewise_cm_text label_y\n";
  curves << "# power-law fits L = A * (C / c_ref)^-alpha + E, one index per variant\n# compute_flops loss_nats\n";
  multipliers << "# compute multipliers against " << report.baseline << ", one index per variant\n"
              << "# compute_flops piecewise_cm low high shared_e_cm\n";
  std::ostringstream predicted;
  predicted << "# compute multipliers against " << report.baseline << " predicted by fitted L(N, D) (rung fit), "
            << "one index per (variant, allocation: rule D = " << Fmt("%g", report.predicted_tokens_per_param)
            << " N, then optimal)\n# compute_flops cm low high extrapolated\n";
  FigureData data;
  for (const VariantStyle& style : figures.styles) {
    points << "# " << style.name << "\n";
    curves << "# " << style.name << "\n";
    multipliers << "# " << style.name << "\n";
    for (const MultiplierRow& row : report.rows) {
      if (row.variant != style.name || row.estimator != Estimator::kPiecewise) continue;
      points << PointLine(figures, style, row);
      multipliers << MultiplierLine(report, row, &data);
    }
    curves << CurveLines(figures, style);
    for (const char* allocation : kAllocations) {
      predicted << "# " << style.name << " | " << allocation << "\n"
                << PredictedLines(report, style.name, allocation, &data) << "\n\n";
    }
    points << "\n\n";
    curves << "\n\n";
    multipliers << "\n\n";
  }
  data.points = points.str();
  data.curves = curves.str();
  data.multipliers = multipliers.str();
  data.predicted = predicted.str();
  return data;
}

// Writes points.dat, curves.dat, multipliers.dat and predicted.dat into `dir`, in that order; the first
// error.
Status WriteDataFiles(const fs::path& dir, const FigureData& data) {
  RUNG_RETURN_IF_ERROR(WriteFile(dir / "points.dat", data.points));
  RUNG_RETURN_IF_ERROR(WriteFile(dir / "curves.dat", data.curves));
  RUNG_RETURN_IF_ERROR(WriteFile(dir / "multipliers.dat", data.multipliers));
  return WriteFile(dir / "predicted.dat", data.predicted);
}

// The settings both figures over compute share: the log x axis, the grid, the border, the key.
std::string ComputeAxisSettings(const Ranges& ranges) {
  return plot::LogAxis("x", ranges.x_lo, ranges.x_hi) +
         "set grid xtics mxtics ytics lc rgb '#dddddd' lw 1, lc rgb '#eeeeee' lw 1\n"
         "set border lw 1.2\n"
         "set xlabel 'training compute C (FLOPs, 6·N·D)'\n"
         "set key outside right top vertical box opaque spacing 1.3 noenhanced\n"
         "set bmargin 4\n";
}

// How the figures name the values of the ladder.
struct ValueNames {
  std::string axis;   // the axis label, noenhanced
  std::string title;  // in a title (enhanced text)
  std::string unit;   // after a number: " nats", " bits per byte" or ""
};

// The names of `metric`'s values: a validation loss in nats for "" or val_loss, else the metric as it is.
ValueNames ValueNamesOf(const std::string& metric) {
  const bool loss = metric.empty() || metric == "val_loss";
  return {loss ? "validation loss L (nats)" : metric, loss ? "Validation loss" : Enh(metric),
          loss ? " nats" : metric == "val_bpb" ? " bits per byte" : ""};
}

// The piecewise rows, best first (highest first when the metric is maximized), and the baseline's loss
// (NaN without it).
std::pair<std::vector<const MultiplierRow*>, double> RankedPoints(const MultiplierReport& report, bool maximize) {
  std::vector<const MultiplierRow*> rows;
  double baseline_loss = std::nan("");
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator != Estimator::kPiecewise) continue;
    rows.push_back(&row);
    if (row.variant == report.baseline) baseline_loss = row.loss;
  }
  std::sort(rows.begin(), rows.end(), [&](const MultiplierRow* a, const MultiplierRow* b) {
    return maximize ? a->loss > b->loss : a->loss < b->loss;  // best first
  });
  return {rows, baseline_loss};
}

// variants.dat of the dot plot: per ranked row its rank, loss, sd, name, loss label and colour.
std::string DotPlotData(const Figures& figures, const std::vector<const MultiplierRow*>& rows) {
  const MultiplierReport& report = figures.report;
  std::ostringstream dots;
  dots << "# rank loss_nats loss_sd variant loss_text colour\n";
  for (size_t rank = 0; rank < rows.size(); ++rank) {
    const MultiplierRow& row = *rows[rank];
    std::string colour = kBaselineColor;
    for (const VariantStyle& style : figures.styles) {
      if (style.name == row.variant) colour = style.color;
    }
    dots << rank << " " << Fmt("%.6f", row.loss) << " " << Fmt("%.6f", row.loss_sd) << " "
         << DataString(plot::ReadableVariant(row.variant) + (row.variant == report.baseline ? " (baseline)" : ""))
         << " " << DataString(Fmt(figures.label_format.c_str(), row.loss)) << " "
         << std::stol(colour.substr(1), nullptr, 16) << "\n";
  }
  return dots.str();
}

// Figure 1 with one ladder point: nothing varies along compute, so the variants' losses as a dot plot,
// best at the top, the baseline's loss as a dashed line. Writes variants.dat; its error.
Status AddDotPlot(const Figures& figures, std::ostringstream* script) {
  const MultiplierReport& report = figures.report;
  const ValueNames names = ValueNamesOf(figures.options.metric);
  const auto [rows, baseline_loss] = RankedPoints(report, figures.options.maximize);
  RUNG_RETURN_IF_ERROR(WriteFile(figures.dir / "variants.dat", DotPlotData(figures, rows)));
  const std::string label = rows.empty() ? std::string() : rows.front()->label;
  // The title centred on the figure, not over the plot: the variants' names push the plot right.
  *script << "set tmargin 5\nset label 1 "
          << DQuote(names.title + " per variant at rung " + Enh(label) + "\n{/*0.8 baseline " +
                    Enh(plot::ReadableVariant(report.baseline)) +
                    "; one rung: no power-law fit and no compute multiplier (they need two or more rungs)" +
                    (figures.seeds ? "; bars ±1 sd over seeds" : "") + "}")
          << " at screen 0.5, screen 0.96 center"
          << "\nset xlabel " << Quote(names.axis) << " noenhanced\nset grid xtics lc rgb '#dddddd'\nset border lw 1.2\n"
          << "set yrange [" << Fmt("%.1f", rows.size() - 0.3) << ":-0.7]\nset ytics noenhanced\nunset key\n"
          << "set offsets graph 0.08, graph 0.08, 0, 0\n";
  if (std::isfinite(baseline_loss)) {
    *script << "set arrow from first " << Fmt("%.6f", baseline_loss) << ", graph 0 to first "
            << Fmt("%.6f", baseline_loss) << ", graph 1 nohead back dt 2 lc rgb '#000000'\n";
  }
  *script << "plot " << figures.Path("variants.dat") << " using 2:1:3:6:ytic(4) with xerrorbars pt 7 ps 1.6 lw 1.5 "
          << "lc rgb variable notitle, \\\n  " << figures.Path("variants.dat")
          << " using 2:1:5:6 with labels offset char 0,0.9 tc rgb variable notitle\n";
  return Status::Ok();
}

// The loss figure's title: the baseline, what the points and lines are, what the labels are.
std::string LossCurvesTitle(const Figures& figures) {
  const MultiplierReport& report = figures.report;
  const std::string value_unit = ValueNamesOf(figures.options.metric).unit;
  const std::string& fit_kind = figures.fits.kind;
  const double shared_e = figures.fits.shared_e;
  std::string seeds_text = figures.seeds ? "points: seed means, bars ±1 sd over seeds; " : "points: runs; ";
  std::string fit_text = fit_kind.empty() ? "no power-law fit"
                                          : "lines: power-law fit L = A·C^{-α} + E" +
                                                (fit_kind == "shared" && std::isfinite(shared_e)
                                                     ? " with one shared E = " + Fmt("%.3f", shared_e) + value_unit
                                                     : std::string(", E free per variant")) +
                                                (report.power_law_residuals == PowerLawResiduals::kNats
                                                     ? ", least squares on L"
                                                     : std::string());
  const std::string labels_text = "labels: piecewise compute multiplier CM = C_{" +
                                  Enh(plot::ReadableVariant(report.baseline)) +
                                  "}(L) / C   (CM > 1: the variant needs less compute)";
  return DQuote("Loss against compute, baseline " + Enh(plot::ReadableVariant(report.baseline)) + "\n{/*0.8 " +
                seeds_text + fit_text + "}\n{/*0.8 " + labels_text + "}");
}

// The plot commands of the loss figure: the baseline first (index 0 of the styles), every variant over
// it, each with its curve, points and labels; a key entry for the curves when some are drawn.
std::vector<std::string> LossCurvesSeries(const Figures& figures) {
  std::vector<std::string> series;
  for (size_t index = 0; index < figures.styles.size(); ++index) {
    const VariantStyle& style = figures.styles[index];
    const std::string title = plot::ReadableVariant(style.name) + (style.baseline ? " (baseline)" : "");
    if (figures.fits.by_variant.count(style.name)) {
      series.push_back(figures.Path("curves.dat") + " index " + std::to_string(index) + " using 1:2 with lines " +
                       style.Lines() + " notitle");
    }
    series.push_back(figures.Path("points.dat") + " index " + std::to_string(index) + " using 1:2" +
                     (figures.seeds ? ":3 with yerrorbars " : " with points ") + style.Points() + " lw 1.5 title " +
                     Quote(title));
    if (!style.baseline) {
      series.push_back(figures.Path("points.dat") + " index " + std::to_string(index) +
                       " using 1:6:5 with labels boxed left offset char 1.2,0 tc rgb " + Quote(style.color) +
                       " notitle");
    }
  }
  // The key names the fitted curves only when some are drawn.
  if (!figures.fits.by_variant.empty()) {
    series.push_back("NaN with lines lc rgb '#555555' lw 2 title " +
                     Quote(figures.fits.kind == "shared" ? "power-law fit (shared E)" : "power-law fit (E free)"));
  }
  return series;
}

// `series` as one plot command, a series per line.
std::string PlotCommand(const std::vector<std::string>& series) {
  std::string command = "plot \\\n";
  for (size_t i = 0; i < series.size(); ++i) command += "  " + series[i] + (i + 1 < series.size() ? ", \\\n" : "\n");
  return command;
}

// Figure 1 with several ladder points: loss against compute, points, curves and multiplier labels.
void AddLossCurves(const Figures& figures, std::ostringstream* script) {
  *script << ComputeAxisSettings(figures.ranges) << "set ylabel "
          << Quote(ValueNamesOf(figures.options.metric).axis) << " noenhanced\n"
          << "set yrange [" << Fmt("%.6f", figures.ranges.y_lo) << ":" << Fmt("%.6f", figures.ranges.y_hi) << "]\n"
          << "set style textbox opaque noborder\n"
          << "set title " << LossCurvesTitle(figures) << "\n"
          << PlotCommand(LossCurvesSeries(figures));
}

// Figure 1, loss against compute, as SVG then PNG; a dot plot with one ladder point. The error of
// writing its data.
Status AddLossFigure(const Figures& figures, std::ostringstream* script) {
  const PlotOptions& options = figures.options;
  *script << "\n# Figure 1: loss against compute\n"
          << plot::SvgTerminal(options.png_width, options.png_height) << "\nset output "
          << figures.Path("loss_vs_compute.svg") << "\n";
  if (figures.one_point) {
    RUNG_RETURN_IF_ERROR(AddDotPlot(figures, script));
  } else {
    AddLossCurves(figures, script);
  }
  *script << plot::PngTerminal(options.png_width, options.png_height) << "\nset output "
          << figures.Path("loss_vs_compute.png") << "\nreplot\nunset output\nreset\n";
  return Status::Ok();
}

// The multiplier figure's series: per variant but the baseline, its piecewise multipliers with bars
// and its shared-E multipliers, where it has finite ones.
std::vector<std::string> MultiplierSeries(const Figures& figures, const FigureData& data) {
  std::vector<std::string> cm_series;
  // The predicted bands behind everything, then the measured multipliers, then the predicted lines.
  std::vector<std::string> predicted_lines;
  for (size_t index = 0; index < figures.styles.size(); ++index) {
    const VariantStyle& style = figures.styles[index];
    for (size_t allocation = 0; allocation < 2; ++allocation) {
      const std::pair<std::string, std::string> key{style.name, kAllocations[allocation]};
      const std::string data_index =
          figures.Path("predicted.dat") + " index " + std::to_string(2 * index + allocation);
      const bool rule = allocation == 0;
      if (data.predicted_bands.count(key)) {
        // The rule's band shaded, the optimum's hatched: where they overlap both stay readable.
        cm_series.push_back(data_index + " using 1:3:4 with filledcurves fc rgb " + Quote(style.color) +
                            (rule ? " fs transparent solid 0.2 noborder" : " fs transparent pattern 4 noborder") +
                            " notitle");
      }
      if (data.drawn_predicted.count(key)) {
        predicted_lines.push_back(
            data_index + " using 1:2 with lines lw 2.5 dt " + (rule ? "'-.'" : "3") + " lc rgb " + Quote(style.color) +
            " title " +
            Quote(plot::ReadableVariant(style.name) + " predicted, " +
                  (rule ? "D = " + Fmt("%g", figures.report.predicted_tokens_per_param) + " N" : "compute-optimal")));
      }
    }
  }
  for (size_t index = 0; index < figures.styles.size(); ++index) {
    const VariantStyle& style = figures.styles[index];
    if (style.baseline) continue;
    const std::string data_index = figures.Path("multipliers.dat") + " index " + std::to_string(index);
    if (data.drawn_piecewise.count(style.name)) {
      cm_series.push_back(data_index + " using 1:2:3:4 with yerrorlines " + style.Points() + " lw 2 title " +
                          Quote(plot::ReadableVariant(style.name) + " piecewise"));
    }
    if (data.drawn_shared.count(style.name)) {
      cm_series.push_back(data_index + " using 1:5 with linespoints lc rgb " + Quote(style.color) +
                          " pt 6 ps 1.2 lw 1.5 dt 2 title " +
                          Quote(plot::ReadableVariant(style.name) + " power law (shared E)"));
    }
  }
  cm_series.insert(cm_series.end(), predicted_lines.begin(), predicted_lines.end());
  return cm_series;
}

// Why no variant has a multiplier to draw: no variant but the baseline, one ladder point, or the
// first piecewise row's reason.
std::string WhyNoMultiplier(const Figures& figures) {
  const MultiplierReport& report = figures.report;
  const bool one_point = figures.one_point;
  std::string why = figures.styles.size() < 2 ? "there is no variant besides the baseline " + report.baseline + "."
                    : one_point ? "the ladder has one point (" + report.rows.front().label +
                                      "); a compute multiplier needs the baseline at two or more compute values "
                                      "(rungs)."
                                : "no variant has a defined compute multiplier";
  if (!one_point && figures.styles.size() >= 2) {
    for (const MultiplierRow& row : report.rows) {
      if (row.estimator == Estimator::kPiecewise && row.variant != report.baseline && !row.why.empty()) {
        why += ":\n" + row.variant + " at " + row.label + ": " + row.why;
        break;
      }
    }
  }
  return why;
}

// What the multiplier figure's bars are: the bootstrap interval (at the level of the first row that has
// one), the seeds' spread, or nothing.
std::string BarsText(const Figures& figures) {
  const MultiplierReport& report = figures.report;
  std::string bars = report.bootstrap_unit.empty()
                         ? (figures.seeds ? "bars: ±1 sd of the paired (same-seed) multipliers" : "no intervals")
                         : "bars: " + Fmt("%.0f", 100 * 0.95) + "% bootstrap interval over " + report.bootstrap_unit;
  for (const MultiplierRow& row : report.rows) {
    if (row.interval) {
      bars = "bars: " + Fmt("%.0f", 100 * row.interval->level) + "% bootstrap interval over " + report.bootstrap_unit;
      break;
    }
  }
  return bars;
}

// Figure 2's settings and plot command: log y past a factor of 3, the title, CM = 1 behind the series.
std::string MultiplierPlot(const Figures& figures, const FigureData& data, const std::vector<std::string>& cm_series) {
  const std::string baseline = Enh(plot::ReadableVariant(figures.report.baseline));
  std::ostringstream script;
  // The predicted rows reach beyond the ladder (10 and 100 times its largest compute): so does x.
  Ranges ranges = figures.ranges;
  const bool predicted = !data.drawn_predicted.empty();
  double ladder_c_hi = 0;
  for (const MultiplierRow& row : figures.report.rows) ladder_c_hi = std::max(ladder_c_hi, row.compute);
  if (predicted) ranges.x_hi = std::max(ranges.x_hi, data.predicted_c_hi * 1.6);
  script << ComputeAxisSettings(ranges);
  // The predicted series' names are long: their key goes below the plot, which keeps its width.
  if (predicted) {
    script << "set key outside below center horizontal maxcols 2 nobox noopaque spacing 1.2 height 1.5 noenhanced\n"
              "set bmargin\n";
  }
  // Multipliers spanning more than a factor of 3 read better on a log scale.
  const double cm_low = std::min(data.cm_lo, 1.0), cm_high = std::max(data.cm_hi, 1.0);
  if (cm_high / cm_low > 3) script << plot::LogAxis("y", cm_low / 1.15, cm_high * 1.15);
  const MultiplierReport& report = figures.report;
  const std::string predicted_text =
      !predicted ? ""
                 : "\n{/*0.8 predicted by L(N, D) fitted per variant: dash-dot at D = " +
                       Fmt("%g", report.predicted_tokens_per_param) + " N, dotted at each law's optimum" +
                       (report.predicted_basis.construction.empty()
                            ? std::string("; no intervals")
                            : "; " + Fmt("%.0f", 100 * report.predicted_level) + "% " +
                                  Enh(report.predicted_basis.construction) + " bands (hatched: optimum)") +
                       "}";
  script << "set ylabel " << DQuote("compute multiplier CM = C_{" + baseline + "}(L) / C") << "\n"
         << "set title "
         << DQuote("Compute multiplier against " + baseline +
                   " (CM > 1: the variant needs less compute for the same loss)\n{/*0.8 solid: piecewise in ln C (" +
                   BarsText(figures) + "); dashed: shared-E power law}" + predicted_text)
         << "\n";
  if (predicted && data.predicted_c_hi > ladder_c_hi * 1.01 && ladder_c_hi > 0) {
    // Beyond the ladder's largest compute the predictions are extrapolations: shaded.
    script << "set object 1 rect from first " << Fmt("%.6e", ladder_c_hi)
           << ", graph 0 to graph 1, graph 1 behind fc rgb '#f1f1f1' fillstyle solid 1.0 noborder\n"
           << "set label 2 'extrapolated: beyond the ladder' at first " << Fmt("%.6e", ladder_c_hi)
           << ", graph 0.04 left offset 0.6,0 tc rgb '#555555' noenhanced\n";
  }
  script
         // Behind the variants: one that coincides with the baseline (CM = 1) is drawn over the line.
         << "set arrow from graph 0, first 1 to graph 1, first 1 nohead back lc rgb '#000000' lw 1.5 dt 2\n"
         << "set label " << Quote(plot::ReadableVariant(figures.report.baseline) + " (CM = 1)")
         << " at graph 0.01, first 1 offset 0,0.7 back tc rgb '#000000' noenhanced\n"
         << PlotCommand(cm_series);
  return script.str();
}

// Figure 2, multipliers against compute, as SVG and PNG; a figure that says why where no variant has one.
void AddMultiplierFigure(const Figures& figures, const FigureData& data, std::ostringstream* script) {
  const PlotOptions& options = figures.options;
  *script << "\n# Figure 2: compute multipliers against compute\n";
  const std::vector<std::string> cm_series = MultiplierSeries(figures, data);
  if (cm_series.empty()) {
    *script << plot::MessageFigure(
        "Compute multiplier against " + plot::ReadableVariant(figures.report.baseline) + ": nothing to draw",
        "No compute multiplier to draw:\n" + WhyNoMultiplier(figures));
  } else {
    *script << MultiplierPlot(figures, data, cm_series);
  }
  const std::string terminal_svg = plot::SvgTerminal(options.png_width, options.png_height);
  const std::string terminal_png = plot::PngTerminal(options.png_width, options.png_height);
  *script << terminal_svg << "\nset output " << figures.Path("multipliers.svg") << "\nreplot\nunset output\n"
          << terminal_png << "\nset output " << figures.Path("multipliers.png") << "\nreplot\nunset output\n";
}

}  // namespace

StatusOr<std::vector<std::string>> WritePlots(const MultiplierReport& report, const PlotOptions& options) {
  RUNG_RETURN_IF_ERROR(plot::MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  std::vector<VariantStyle> styles = VariantStyles(report);
  CurveFits fits = FittedCurves(report);
  RUNG_ASSIGN_OR_RETURN(const Ranges ranges, PlotRanges(report, fits));
  const Figures figures{report, options, dir, std::move(styles), std::move(fits), ranges, LabelHeights(report, ranges),
                        LossLabelFormat(report), report.max_seeds > 1, report.ladder_points < 2};

  const FigureData data = DataOf(figures);
  RUNG_RETURN_IF_ERROR(WriteDataFiles(dir, data));

  std::ostringstream script;
  script << "# rung plot: " << report.source << " (baseline " << report.baseline << ")\n"
         << "# Redraw with: gnuplot plots.gp (paths are absolute)\n"
         << "set encoding utf8\n";
  RUNG_RETURN_IF_ERROR(AddLossFigure(figures, &script));
  AddMultiplierFigure(figures, data, &script);
  return plot::RenderGnuplot(options.gnuplot, dir.string(), "plots.gp", script.str(),
                             {"loss_vs_compute.svg", "loss_vs_compute.png", "multipliers.svg", "multipliers.png"});
}

}  // namespace rung::fit
