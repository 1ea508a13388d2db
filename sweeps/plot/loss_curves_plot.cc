#include "sweeps/plot/loss_curves_plot.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

}  // namespace

StatusOr<std::vector<std::string>> WriteLossCurvesPlots(const std::vector<LossCurve>& curves,
                                                        const LossCurvesOptions& options) {
  std::map<std::string, std::vector<const LossCurve*>> by_rung;
  for (const LossCurve& curve : curves) {
    if (!curve.points.empty()) by_rung[curve.rung].push_back(&curve);
  }
  if (by_rung.empty()) return Status::InvalidArgument("no training curve has points to draw");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  std::ostringstream script;
  script << "# rung plot: training curves of " << options.title << "\nset encoding utf8\n";
  std::vector<std::string> outputs;
  for (const auto& [rung, lines] : by_rung) {
    const std::string name = "loss_curves_" + FileNamePart(rung);
    std::ostringstream data;
    for (const LossCurve* curve : lines) {
      data << "# " << curve->label << "\n";
      for (const auto& [compute, value] : curve->points) {
        data << Format("%.6e", compute) << " " << (std::isfinite(value) ? Format("%.6g", value) : "NaN") << "\n";
      }
      data << "\n\n";
    }
    RUNG_RETURN_IF_ERROR(WriteTextFile((dir / (name + ".dat")).string(), data.str()));
    script << "reset\nset border lw 1.2\nset grid lc rgb '#dddddd'\nset logscale x\nset format x '10^{%L}'\n"
           << "set title " << DoubleQuote(EnhancedLiteral(options.title + ": rung " + rung)) << "\n"
           << "set xlabel 'training compute (FLOPs, 6·N·D)'\nset ylabel " << Quote(options.metric + " (nats)")
           << "\nset key outside right top noenhanced\nplot ";
    for (size_t i = 0; i < lines.size(); ++i) {
      script << (i ? ", \\\n  " : "") << Quote((dir / (name + ".dat")).string()) << " index " << i
             << " using 1:2 with lines lw 1.5 title " << Quote(lines[i]->label);
    }
    script << "\n" << SvgAndPngOutputs((dir / name).string(), options.width, options.height);
    outputs.push_back(name + ".svg");
    outputs.push_back(name + ".png");
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "loss_curves.gp", script.str(), outputs);
}

}  // namespace rung::plot
