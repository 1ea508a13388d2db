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

}  // namespace

StatusOr<std::vector<std::string>> WritePlots(const MultiplierReport& report, const PlotOptions& options) {
  RUNG_RETURN_IF_ERROR(plot::MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);

  std::vector<VariantStyle> styles;
  for (size_t index = 0; index < report.variants.size(); ++index) {
    const bool baseline = report.variants[index] == report.baseline;
    const size_t slot = (index + kColors.size() - 1) % kColors.size();
    styles.push_back({report.variants[index], baseline ? kBaselineColor : kColors[slot], baseline,
                      baseline ? 7 : kPoints[slot % kPoints.size()], baseline ? 1 : kDashes[slot % kDashes.size()]});
  }

  // The fitted curve per variant: shared E, or free E where the shared fit is missing.
  std::map<std::string, const PowerLawFit*> curve_fit;
  std::string fit_kind;
  for (EMode mode : {EMode::kShared, EMode::kFree}) {
    for (const FitSummary& summary : report.fits) {
      if (summary.mode == mode && summary.fit && !curve_fit.count(summary.variant)) {
        curve_fit[summary.variant] = &*summary.fit;
        if (fit_kind.empty()) fit_kind = mode == EMode::kShared ? "shared" : "free";
      }
    }
  }
  double shared_e = std::numeric_limits<double>::quiet_NaN();
  for (const FitSummary& summary : report.fits) {
    if (summary.mode == EMode::kShared && summary.fit) shared_e = summary.fit->law.e;
  }

  // Data: points (piecewise rows), curves, multipliers.
  double c_min = std::numeric_limits<double>::infinity(), c_max = 0;
  for (const MultiplierRow& row : report.rows) {
    c_min = std::min(c_min, row.compute);
    c_max = std::max(c_max, row.compute);
  }
  if (!(c_max > 0)) return Status::InvalidArgument("the report has no ladder points to plot");
  const bool seeds = report.max_seeds > 1;
  // The x range leaves room right of the last points for their labels; the fitted curves span it.
  const double x_lo = c_min / 1.6, x_hi = c_max * 2.5;
  auto curve_at = [&](const PowerLaw& law, int step) {
    double compute = std::exp(std::log(x_lo) + (std::log(x_hi) - std::log(x_lo)) * step / 200.0);
    return std::make_pair(compute, law.Predict(compute));
  };

  // The y range: points with their bars and the curves.
  double y_lo = std::numeric_limits<double>::infinity(), y_hi = -y_lo;
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator != Estimator::kPiecewise) continue;
    y_lo = std::min(y_lo, row.loss - row.loss_sd);
    y_hi = std::max(y_hi, row.loss + row.loss_sd);
  }
  for (const auto& [variant, fit] : curve_fit) {
    for (int step = 0; step <= 200; ++step) {
      double loss = curve_at(fit->law, step).second;
      y_lo = std::min(y_lo, loss);
      y_hi = std::max(y_hi, loss);
    }
  }
  const double pad = 0.04 * std::max(y_hi - y_lo, 1e-6);
  y_lo -= pad;
  y_hi += pad;

  // Label heights: at each compute the labels of the variants, in loss order, at least 4.5% of the
  // y range apart (about a line of text), centred on their points.
  std::map<const MultiplierRow*, double> label_y;
  {
    const double gap = 0.045 * (y_hi - y_lo);
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
  }

  // With one ladder point there is no multiplier: each variant is labelled with its loss, at the
  // decimals that tell the losses apart.
  const bool one_point = report.ladder_points < 2;
  std::vector<double> losses;
  for (const MultiplierRow& row : report.rows) {
    if (row.estimator == Estimator::kPiecewise) losses.push_back(row.loss);
  }
  const std::string label_format = "%." + std::to_string(plot::DecimalsToDistinguish(losses, 3, 5)) + "f";

  std::ostringstream points, curves, multipliers;
  points << "# " << report.source << ": seed-mean loss per variant (one index per variant, in key order)\n"
         << "# compute_flops loss_nats loss_sd label piecewise_cm_text label_y\n";
  curves << "# power-law fits L = A * (C / c_ref)^-alpha + E, one index per variant\n# compute_flops loss_nats\n";
  multipliers << "# compute multipliers against " << report.baseline << ", one index per variant\n"
              << "# compute_flops piecewise_cm low high shared_e_cm\n";
  double cm_lo = std::numeric_limits<double>::infinity(), cm_hi = 0;
  std::set<std::string> drawn_piecewise, drawn_shared;  // variants with a finite value of each
  for (const VariantStyle& style : styles) {
    points << "# " << style.name << "\n";
    curves << "# " << style.name << "\n";
    multipliers << "# " << style.name << "\n";
    for (const MultiplierRow& row : report.rows) {
      if (row.variant != style.name || row.estimator != Estimator::kPiecewise) continue;
      std::string cm = row.multiplier ? "×" + MultiplierLabel(*row.multiplier) : "undefined";
      if (one_point) cm = Fmt(label_format.c_str(), row.loss);
      else if (style.baseline) cm = "";
      auto y = label_y.find(&row);
      points << Fmt("%.6e", row.compute) << " " << Fmt("%.6f", row.loss) << " " << Fmt("%.6f", row.loss_sd) << " "
             << DataString(row.label) << " " << DataString(cm) << " "
             << Fmt("%.6f", y == label_y.end() ? row.loss : y->second) << "\n";
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
      if (std::isfinite(value)) drawn_piecewise.insert(row.variant);
      if (std::isfinite(shared)) drawn_shared.insert(row.variant);
      for (double value_seen : {low, high, shared}) {
        if (std::isfinite(value_seen) && value_seen > 0) {
          cm_lo = std::min(cm_lo, value_seen);
          cm_hi = std::max(cm_hi, value_seen);
        }
      }
      multipliers << Fmt("%.6e", row.compute) << " " << Fmt("%.6f", value) << " " << Fmt("%.6f", low) << " "
                  << Fmt("%.6f", high) << " " << Fmt("%.6f", shared) << "\n";
    }
    auto fit = curve_fit.find(style.name);
    if (fit != curve_fit.end()) {
      for (int step = 0; step <= 200; ++step) {
        auto [compute, loss] = curve_at(fit->second->law, step);
        curves << Fmt("%.6e", compute) << " " << Fmt("%.6f", loss) << "\n";
      }
    } else {
      curves << "NaN NaN\n";
    }
    points << "\n\n";
    curves << "\n\n";
    multipliers << "\n\n";
  }
  RUNG_RETURN_IF_ERROR(WriteFile(dir / "points.dat", points.str()));
  RUNG_RETURN_IF_ERROR(WriteFile(dir / "curves.dat", curves.str()));
  RUNG_RETURN_IF_ERROR(WriteFile(dir / "multipliers.dat", multipliers.str()));

  auto path = [&](const char* name) { return Quote((dir / name).string()); };
  const std::string terminal_svg = plot::SvgTerminal(options.png_width, options.png_height);
  const std::string terminal_png = plot::PngTerminal(options.png_width, options.png_height);
  std::ostringstream script;
  script << "# rung plot: " << report.source << " (baseline " << report.baseline << ")\n"
         << "# Redraw with: gnuplot plots.gp (paths are absolute)\n"
         << "set encoding utf8\n";
  auto common = [&]() {
    script << plot::LogAxis("x", x_lo, x_hi)
           << "set grid xtics mxtics ytics lc rgb '#dddddd' lw 1, lc rgb '#eeeeee' lw 1\n"
           << "set border lw 1.2\n"
           << "set xlabel 'training compute C (FLOPs, 6·N·D)'\n"
           << "set key outside right top vertical box opaque spacing 1.3 noenhanced\n"
           << "set bmargin 4\n";
  };

  // Figure 1: loss against compute.
  const bool loss = options.metric.empty() || options.metric == "val_loss";
  const std::string value_axis = loss ? "validation loss L (nats)" : options.metric;
  const std::string value_title = loss ? "Validation loss" : Enh(options.metric);
  const std::string value_unit = loss ? " nats" : options.metric == "val_bpb" ? " bits per byte" : "";
  std::string seeds_text = seeds ? "points: seed means, bars ±1 sd over seeds; " : "points: runs; ";
  std::string fit_text = fit_kind.empty() ? "no power-law fit"
                                          : "lines: power-law fit L = A·C^{-α} + E" +
                                                (fit_kind == "shared" && std::isfinite(shared_e)
                                                     ? " with one shared E = " + Fmt("%.3f", shared_e) + value_unit
                                                     : std::string(", E free per variant"));
  const std::string labels_text =
      one_point ? "" : "labels: piecewise compute multiplier CM = C_{" + Enh(plot::ReadableVariant(report.baseline)) +
                      "}(L) / C   (CM > 1: the variant needs less compute)";
  script << "\n# Figure 1: loss against compute\n"
         << terminal_svg << "\nset output " << path("loss_vs_compute.svg") << "\n";
  if (one_point) {
    // One ladder point: nothing varies along compute, so the variants' losses as a dot plot, best at
    // the top, the baseline's loss as a dashed line.
    std::vector<const MultiplierRow*> rows;
    double baseline_loss = std::nan("");
    for (const MultiplierRow& row : report.rows) {
      if (row.estimator != Estimator::kPiecewise) continue;
      rows.push_back(&row);
      if (row.variant == report.baseline) baseline_loss = row.loss;
    }
    std::sort(rows.begin(), rows.end(), [&](const MultiplierRow* a, const MultiplierRow* b) {
      return options.maximize ? a->loss > b->loss : a->loss < b->loss;  // best first
    });
    std::ostringstream dots;
    dots << "# rank loss_nats loss_sd variant loss_text colour\n";
    for (size_t rank = 0; rank < rows.size(); ++rank) {
      std::string colour = kBaselineColor;
      for (const VariantStyle& style : styles) {
        if (style.name == rows[rank]->variant) colour = style.color;
      }
      dots << rank << " " << Fmt("%.6f", rows[rank]->loss) << " " << Fmt("%.6f", rows[rank]->loss_sd) << " "
           << DataString(plot::ReadableVariant(rows[rank]->variant) + (rows[rank]->variant == report.baseline ? " (baseline)" : ""))
           << " "
           << DataString(Fmt(label_format.c_str(), rows[rank]->loss)) << " " << std::stol(colour.substr(1), nullptr, 16)
           << "\n";
    }
    RUNG_RETURN_IF_ERROR(WriteFile(dir / "variants.dat", dots.str()));
    const std::string label = rows.empty() ? std::string() : rows.front()->label;
    // The title centred on the figure, not over the plot: the variants' names push the plot right.
    script << "set tmargin 5\nset label 1 "
           << DQuote(value_title + " per variant at rung " + Enh(label) + "\n{/*0.8 baseline " +
                     Enh(plot::ReadableVariant(report.baseline)) +
                     "; one rung: no power-law fit and no compute multiplier (they need two or more rungs)" +
                     (seeds ? "; bars ±1 sd over seeds" : "") + "}")
           << " at screen 0.5, screen 0.96 center"
           << "\nset xlabel " << Quote(value_axis) << " noenhanced\nset grid xtics lc rgb '#dddddd'\nset border lw 1.2\n"
           << "set yrange [" << Fmt("%.1f", rows.size() - 0.3) << ":-0.7]\nset ytics noenhanced\nunset key\n"
           << "set offsets graph 0.08, graph 0.08, 0, 0\n";
    if (std::isfinite(baseline_loss)) {
      script << "set arrow from first " << Fmt("%.6f", baseline_loss) << ", graph 0 to first "
             << Fmt("%.6f", baseline_loss) << ", graph 1 nohead back dt 2 lc rgb '#000000'\n";
    }
    script << "plot " << path("variants.dat") << " using 2:1:3:6:ytic(4) with xerrorbars pt 7 ps 1.6 lw 1.5 "
           << "lc rgb variable notitle, \\\n  " << path("variants.dat")
           << " using 2:1:5:6 with labels offset char 0,0.9 tc rgb variable notitle\n";
    script << terminal_png << "\nset output " << path("loss_vs_compute.png") << "\nreplot\nunset output\nreset\n";
  } else {
    common();
    script << "set ylabel " << Quote(value_axis) << " noenhanced\n"
           << "set yrange [" << Fmt("%.6f", y_lo) << ":" << Fmt("%.6f", y_hi) << "]\n"
           << "set style textbox opaque noborder\n"
           << "set title "
           << DQuote("Loss against compute, baseline " + Enh(plot::ReadableVariant(report.baseline)) + "\n{/*0.8 " + seeds_text + fit_text +
                     "}\n{/*0.8 " + labels_text + "}")
           << "\n";
    // The baseline first (index 0 of the styles), every variant over it.
    std::vector<std::string> series;
    for (size_t index = 0; index < styles.size(); ++index) {
      const VariantStyle& style = styles[index];
      const std::string title = plot::ReadableVariant(style.name) + (style.baseline ? " (baseline)" : "");
      if (curve_fit.count(style.name)) {
        series.push_back(path("curves.dat") + " index " + std::to_string(index) + " using 1:2 with lines " +
                         style.Lines() + " notitle");
      }
      series.push_back(path("points.dat") + " index " + std::to_string(index) + " using 1:2" +
                       (seeds ? ":3 with yerrorbars " : " with points ") + style.Points() + " lw 1.5 title " +
                       Quote(title));
      if (!style.baseline || one_point) {
        series.push_back(path("points.dat") + " index " + std::to_string(index) +
                         " using 1:6:5 with labels boxed left offset char 1.2,0 tc rgb " + Quote(style.color) +
                         " notitle");
      }
    }
    // The key names the fitted curves only when some are drawn.
    if (!curve_fit.empty()) {
      series.push_back("NaN with lines lc rgb '#555555' lw 2 title " +
                       Quote(fit_kind == "shared" ? "power-law fit (shared E)" : "power-law fit (E free)"));
    }
    script << "plot \\\n";
    for (size_t i = 0; i < series.size(); ++i) script << "  " << series[i] << (i + 1 < series.size() ? ", \\\n" : "\n");
    script << terminal_png << "\nset output " << path("loss_vs_compute.png") << "\nreplot\nunset output\nreset\n";
  }

  // Figure 2: multipliers against compute; a figure that says why where no variant has one.
  script << "\n# Figure 2: compute multipliers against compute\n";
  std::vector<std::string> cm_series;
  for (size_t index = 0; index < styles.size(); ++index) {
    const VariantStyle& style = styles[index];
    if (style.baseline) continue;
    if (drawn_piecewise.count(style.name)) {
      cm_series.push_back(path("multipliers.dat") + " index " + std::to_string(index) + " using 1:2:3:4 with yerrorlines " +
                          style.Points() + " lw 2 title " + Quote(plot::ReadableVariant(style.name) + " piecewise"));
    }
    if (drawn_shared.count(style.name)) {
      cm_series.push_back(path("multipliers.dat") + " index " + std::to_string(index) + " using 1:5 with linespoints lc rgb " +
                          Quote(style.color) + " pt 6 ps 1.2 lw 1.5 dt 2 title " +
                          Quote(plot::ReadableVariant(style.name) + " power law (shared E)"));
    }
  }
  if (cm_series.empty()) {
    std::string why = styles.size() < 2 ? "there is no variant besides the baseline " + report.baseline + "."
                      : one_point ? "the ladder has one point (" + report.rows.front().label +
                                        "); a compute multiplier needs the baseline at two or more compute values "
                                        "(rungs)."
                                  : "no variant has a defined compute multiplier";
    if (!one_point && styles.size() >= 2) {
      for (const MultiplierRow& row : report.rows) {
        if (row.estimator == Estimator::kPiecewise && row.variant != report.baseline && !row.why.empty()) {
          why += ":\n" + row.variant + " at " + row.label + ": " + row.why;
          break;
        }
      }
    }
    script << plot::MessageFigure("Compute multiplier against " + plot::ReadableVariant(report.baseline) + ": nothing to draw",
                                  "No compute multiplier to draw:\n" + why);
  } else {
    common();
    std::string bars = report.bootstrap_unit.empty()
                           ? (seeds ? "bars: ±1 sd of the paired (same-seed) multipliers" : "no intervals")
                           : "bars: " + Fmt("%.0f", 100 * 0.95) + "% bootstrap interval over " + report.bootstrap_unit;
    for (const MultiplierRow& row : report.rows) {
      if (row.interval) {
        bars = "bars: " + Fmt("%.0f", 100 * row.interval->level) + "% bootstrap interval over " + report.bootstrap_unit;
        break;
      }
    }
    // Multipliers spanning more than a factor of 3 read better on a log scale.
    const double cm_low = std::min(cm_lo, 1.0), cm_high = std::max(cm_hi, 1.0);
    if (cm_high / cm_low > 3) script << plot::LogAxis("y", cm_low / 1.15, cm_high * 1.15);
    script << "set ylabel " << DQuote("compute multiplier CM = C_{" + Enh(plot::ReadableVariant(report.baseline)) + "}(L) / C") << "\n"
           << "set title "
           << DQuote("Compute multiplier against " + Enh(plot::ReadableVariant(report.baseline)) +
                     " (CM > 1: the variant needs less compute for the same loss)\n{/*0.8 solid: piecewise in ln C (" +
                     bars + "); dashed: shared-E power law}")
           << "\n"
           // Behind the variants: one that coincides with the baseline (CM = 1) is drawn over the line.
           << "set arrow from graph 0, first 1 to graph 1, first 1 nohead back lc rgb '#000000' lw 1.5 dt 2\n"
           << "set label " << Quote(plot::ReadableVariant(report.baseline) + " (CM = 1)")
           << " at graph 0.01, first 1 offset 0,0.7 back tc rgb '#000000' noenhanced\n"
           << "plot \\\n";
    for (size_t i = 0; i < cm_series.size(); ++i) {
      script << "  " << cm_series[i] << (i + 1 < cm_series.size() ? ", \\\n" : "\n");
    }
  }
  script << terminal_svg << "\nset output " << path("multipliers.svg") << "\nreplot\nunset output\n"
         << terminal_png << "\nset output " << path("multipliers.png") << "\nreplot\nunset output\n";

  return plot::RenderGnuplot(options.gnuplot, dir.string(), "plots.gp", script.str(),
                             {"loss_vs_compute.svg", "loss_vs_compute.png", "multipliers.svg", "multipliers.png"});
}

}  // namespace rung::fit
