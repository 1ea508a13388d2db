#include "sweeps/plot/failure_modes_plot.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <sstream>

#include "core/common/atomic_file.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

struct Mode {
  const char* stem;                         // file stem
  double FailureModeSummary::*statistic;    // what it draws
  const char* label;                        // y axis
  bool per_precision;                       // a line per precision (else the fp32 rows stand for all)
  bool log_y;
};

constexpr Mode kModes[] = {
    {"position_inversion", &FailureModeSummary::position_inversion,
     "share of (near, far) pairs with S(near) < S(far)", false, false},
    {"position_aliasing", &FailureModeSummary::position_aliasing_fraction,
     "share of distances with an aliasing partner", true, false},
    {"token_inversion", &FailureModeSummary::token_inversion, "share of distances where the two keys' order flips",
     false, false},
    {"token_aliasing", &FailureModeSummary::token_aliasing, "distances where the two keys' scores alias", true,
     true},
    {"attention_invariance", &FailureModeSummary::attention_invariance,
     "pairs of distances aliasing for both keys", true, true},
};

}  // namespace

StatusOr<std::vector<std::string>> WriteFailureModePlots(const std::vector<FailureModeSummary>& rows,
                                                         const DiagnosticsPlotOptions& options) {
  if (rows.empty()) return Status::InvalidArgument("no failure-mode rows to draw");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  std::ostringstream script;
  script << "# rung diag: RoPE failure modes of " << options.title << "\n";
  std::vector<std::string> outputs;
  std::set<double> bases;
  for (const FailureModeSummary& row : rows) {
    if (std::isfinite(row.base)) bases.insert(row.base);
  }
  for (const Mode& mode : kModes) {
    // One series per (source, base, precision): M against the statistic, ascending M.
    std::map<std::tuple<std::string, double, std::string>, std::map<double, double>> series;
    for (const FailureModeSummary& row : rows) {
      if (!mode.per_precision && row.precision != "fp32") continue;
      const double value = row.*mode.statistic;
      if (!std::isfinite(value)) continue;
      series[{row.source, std::isfinite(row.base) ? row.base : 0.0, mode.per_precision ? row.precision : ""}]
            [static_cast<double>(row.length)] = value;
    }
    if (series.empty()) continue;
    // A log axis needs a positive value to draw (gnuplot refuses a plot whose every y is undefined);
    // a mode with a zero or negative value is drawn on a linear axis.
    bool all_positive = true;
    for (const auto& [key, points] : series) {
      for (const auto& [m, value] : points) all_positive = all_positive && value > 0;
    }
    const bool log_y = mode.log_y && all_positive;
    const std::string stem = mode.stem;
    std::ostringstream data;
    std::vector<std::string> titles;
    std::vector<bool> dashed;
    for (const auto& [key, points] : series) {
      const auto& [source, base, precision] = key;
      data << "# " << source << " " << base << " " << precision << "\n";
      for (const auto& [m, value] : points) data << Format("%.10g", m) << " " << Format("%.10g", value) << "\n";
      data << "\n\n";
      titles.push_back(source + (bases.size() > 1 ? " b=" + Format("%g", base) : "") +
                       (precision.empty() ? "" : " " + precision));
      dashed.push_back(source == "Gaussian");
    }
    RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / (stem + ".dat")).string(), {data.str()}));
    script << "reset\nset encoding utf8\nset border lw 1.2\nset grid lc rgb '#dddddd'\nset title "
           << DoubleQuote(EnhancedLiteral(options.title + ": " + stem)) << "\nset logscale x 2\n"
           << (log_y ? "set logscale y\n" : "") << "set xlabel 'context length M'\nset ylabel "
           << Quote(mode.label) << "\nset key outside right top noenhanced\nplot ";
    for (size_t i = 0; i < titles.size(); ++i) {
      script << (i ? ", \\\n  " : "") << Quote((dir / (stem + ".dat")).string()) << " index " << i
             << " using 1:2 with linespoints lw 2 pt 7 " << (dashed[i] ? "dt 2 " : "") << "title " << Quote(titles[i]);
    }
    script << "\n" << SvgAndPngOutputs((dir / stem).string(), options.width, options.height);
    outputs.push_back(stem + ".svg");
    outputs.push_back(stem + ".png");
  }
  if (outputs.empty()) return Status::InvalidArgument("the failure-mode rows hold no statistic to draw");
  return RenderGnuplot(options.gnuplot, dir.string(), "failure_modes.gp", script.str(), outputs);
}

}  // namespace rung::plot
