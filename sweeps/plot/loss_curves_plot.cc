#include "sweeps/plot/loss_curves_plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

#include "core/common/atomic_file.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

// ColorBrewer Dark2 for the cells that are not the baseline (black).
const std::vector<std::string> kColors = {"#d95f02", "#1b9e77", "#7570b3", "#e7298a",
                                          "#66a61e", "#e6ab02", "#a6761d", "#1f78b4"};
const std::vector<int> kDashes = {2, 4, 5, 3};

const std::string& CellOf(const LossCurve& curve) { return curve.cell.empty() ? curve.label : curve.cell; }

}  // namespace

StatusOr<std::vector<std::string>> WriteLossCurvesPlots(const std::vector<LossCurve>& curves,
                                                        const LossCurvesOptions& options) {
  // One figure per (rung, group).
  std::map<std::pair<std::string, std::string>, std::vector<const LossCurve*>> by_figure;
  for (const LossCurve& curve : curves) {
    if (!curve.points.empty()) by_figure[{curve.rung, curve.group}].push_back(&curve);
  }
  if (by_figure.empty()) return Status::InvalidArgument("no training curve has points to draw");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  // One style per cell in every figure, in the order the cells come; the baseline's cells first.
  std::vector<std::string> cells;
  for (bool baseline : {true, false}) {
    for (const LossCurve& curve : curves) {
      if (curve.baseline == baseline && std::find(cells.begin(), cells.end(), CellOf(curve)) == cells.end()) {
        cells.push_back(CellOf(curve));
      }
    }
  }
  size_t baseline_cells = 0;
  for (const std::string& cell : cells) {
    for (const LossCurve& curve : curves) {
      if (curve.baseline && CellOf(curve) == cell) {
        ++baseline_cells;
        break;
      }
    }
  }
  std::ostringstream script;
  script << "# rung plot: training curves of " << options.title << "\nset encoding utf8\n";
  std::vector<std::string> outputs;
  for (auto& [figure, lines] : by_figure) {
    const auto& [rung, group] = figure;
    std::stable_sort(lines.begin(), lines.end(), [&](const LossCurve* a, const LossCurve* b) {
      return std::find(cells.begin(), cells.end(), CellOf(*a)) < std::find(cells.begin(), cells.end(), CellOf(*b));
    });
    const std::string name = "loss_curves_" + FileNamePart(rung) + (group.empty() ? "" : "_" + FileNamePart(group));
    std::ostringstream data;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const LossCurve* curve : lines) {
      data << "# " << curve->label << "\n";
      for (const auto& [compute, value] : curve->points) {
        data << Format("%.6e", compute) << " " << (std::isfinite(value) ? Format("%.6g", value) : "NaN") << "\n";
        if (compute > 0) lo = std::min(lo, compute), hi = std::max(hi, compute);
      }
      data << "\n\n";
    }
    RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / (name + ".dat")).string(), {data.str()}));
    if (!(hi > lo)) lo = hi / 2, hi = hi * 2;  // one point
    std::map<std::string, int> seeds;
    for (const LossCurve* curve : lines) ++seeds[CellOf(*curve)];
    script << "reset\nset border lw 1.2\nset grid lc rgb '#dddddd'\n" << LogAxis("x", lo, hi)
           << "set title " << DoubleQuote(EnhancedLiteral(options.title + ": rung " + rung + (group.empty() ? "" : ", " + group)))
           << "\n"
           << "set xlabel 'training compute (FLOPs, 6·N·D)'\nset ylabel " << Quote(options.metric + " (nats)")
           << " noenhanced\nset key outside right top noenhanced\nplot ";
    std::map<std::string, bool> titled;
    for (size_t i = 0; i < lines.size(); ++i) {
      const LossCurve& curve = *lines[i];
      // The variants' colours in the order rung plot's other figures give them (the baseline's cells
      // are black and take no colour).
      const size_t slot = std::find(cells.begin(), cells.end(), CellOf(curve)) - cells.begin() - baseline_cells;
      std::string style;
      if (curve.baseline) {
        style = "lc rgb '#000000' lw 3 dt 1";
      } else {
        style = "lc rgb " + Quote(kColors[slot % kColors.size()]) + " lw 2 dt " +
                std::to_string(kDashes[(slot / kColors.size() + slot) % kDashes.size()]);
      }
      const int count = seeds[CellOf(curve)];
      std::string title = "notitle";
      if (!titled[CellOf(curve)]) {
        title = "title " + Quote(CellOf(curve) + (curve.baseline ? " (baseline)" : "") +
                                 (count > 1 ? " (" + std::to_string(count) + " seeds)" : ""));
        titled[CellOf(curve)] = true;
      }
      script << (i ? ", \\\n  " : "") << Quote((dir / (name + ".dat")).string()) << " index " << i
             << " using 1:2 with linespoints pt 7 ps 0.6 " << style << " " << title;  // a one-point curve shows
    }
    script << "\n" << SvgAndPngOutputs((dir / name).string(), options.width, options.height);
    outputs.push_back(name + ".svg");
    outputs.push_back(name + ".png");
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "loss_curves.gp", script.str(), outputs);
}

}  // namespace rung::plot
