#include "sweeps/plot/probe_plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/common/atomic_file.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {
namespace {

// The indexing probe's figure (the header): one line of points by list length.
StatusOr<std::vector<std::string>> WriteIndexingPlot(const std::vector<records::ProbeResult>& cells,
                                                     const DiagnosticsPlotOptions& options, const std::string& dir) {
  const std::string name = "probe_indexing";
  std::ostringstream data;
  double lowest = 0, highest = 0;
  for (const records::ProbeResult& cell : cells) {
    const double tokens = cell.mean_tokens.value_or(static_cast<double>(cell.length));
    lowest = lowest == 0 ? tokens : std::min(lowest, tokens);
    highest = std::max(highest, tokens);
    data << Format("%.6g", tokens) << " " << Format("%.6g", cell.accuracy) << " " << Format("%.6g", cell.accuracy_sd.value_or(0))
         << " " << cell.elements.value_or(0) << " " << Format("%.6g", cell.position_blind.value_or(NAN)) << "\n";
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + name + ".dat", {data.str()}));
  const std::string& score = cells.front().score;
  std::ostringstream script;
  script << "# rung diag: indexing probe of " << options.title << "\nreset\nset encoding utf8\nset border lw 1.2\nset title "
         << DoubleQuote(EnhancedLiteral(options.title + ": indexing accuracy (paper 003 D.2; " +
                                        (score == "choice" ? "choice among 0-3" : score == "next_token" ? "next token" : "greedy decode") +
                                        ", " + std::to_string(cells.front().lists.value_or(0)) + " lists per length, bars +-1 sd)"))
         << "\nset xlabel 'prompt tokens (mean over the prompts of a list length)'\nset ylabel 'accuracy'\n"
         << "set logscale x 2\nset xrange [" << Format("%.6g", lowest / 1.5) << ":" << Format("%.6g", highest * 1.5) << "]\n"
         << "set yrange [-0.05:1.1]\nset key top right\nset grid ytics lc rgb '#dddddd'\n"
         << "plot " << Quote(dir + "/" + name + ".dat")
         << " using 1:2:3 with yerrorlines lw 2 pt 7 lc rgb '#2166ac' title 'accuracy', '' using 1:2:(sprintf('%d', $4)) "
            "with labels offset 1.5,0.8 font ',9' notitle, "
         << Format("%.6g", cells.front().chance.value_or(0.25)) << " with lines dt 2 lc rgb '#b2182b' title 'chance (1/4)', '' using 1:5 "
            "with linespoints dt 3 pt 6 lc rgb '#4d4d4d' title 'blind to position (the mode of each list)'\n"
         << SvgAndPngOutputs(dir + "/" + name, options.width, options.height);
  return RenderGnuplot(options.gnuplot, dir, "probe.gp", script.str(), {name + ".svg", name + ".png"});
}

}  // namespace

StatusOr<std::vector<std::string>> WriteProbePlot(const std::vector<records::ProbeResult>& cells,
                                                  const DiagnosticsPlotOptions& options) {
  namespace fs = std::filesystem;
  if (cells.empty()) return Status::InvalidArgument("the probe holds no cell");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  if (cells.front().elements) return WriteIndexingPlot(cells, options, dir.string());
  // The grid's axes: every length and depth of any method, ascending; methods in first-seen order.
  std::vector<int64_t> lengths;
  std::vector<double> depths;
  std::vector<std::string> methods;
  for (const records::ProbeResult& cell : cells) {
    if (std::find(lengths.begin(), lengths.end(), cell.length) == lengths.end()) lengths.push_back(cell.length);
    if (std::find(depths.begin(), depths.end(), cell.depth) == depths.end()) depths.push_back(cell.depth);
    if (std::find(methods.begin(), methods.end(), cell.method) == methods.end()) methods.push_back(cell.method);
  }
  std::sort(lengths.begin(), lengths.end());
  std::sort(depths.begin(), depths.end());
  const std::string kind = cells.front().probe;
  std::ostringstream script;
  script << "# rung diag: " << kind << " probe of " << options.title << "\n";
  std::vector<std::string> outputs;
  for (const std::string& method : methods) {
    const std::string name = "probe_" + FileNamePart(kind) + "_" + FileNamePart(method.empty() ? "none" : method);
    // One line per cell: column, row, accuracy, label; a cell the method lacks is left out.
    std::ostringstream data;
    for (const records::ProbeResult& cell : cells) {
      if (cell.method != method) continue;
      const auto column = std::find(lengths.begin(), lengths.end(), cell.length) - lengths.begin();
      const auto row = std::find(depths.begin(), depths.end(), cell.depth) - depths.begin();
      data << column << " " << row << " " << Format("%.6g", cell.accuracy) << " " << cell.correct << "/" << cell.instances
           << "\n";
    }
    RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / (name + ".dat")).string(), {data.str()}));
    script << "reset\nset encoding utf8\nset border lw 1.2\nset title "
           << DoubleQuote(EnhancedLiteral(options.title + ": " + kind + " accuracy (" +
                                          (cells.front().score == "decode" ? "greedy decode" : "next token") + ", " +
                                          (method.empty() ? "none" : method) + ")"))
           << "\nset xlabel 'prompt length (tokens)'\nset ylabel 'needle depth'\nset cblabel 'accuracy'\n"
           << "set cbrange [0:1]\nset palette defined (0 '#b2182b', 0.5 '#f7f7f7', 1 '#2166ac')\n"
           << "set xrange [-0.5:" << static_cast<double>(lengths.size()) - 0.5 << "]\n"
           << "set yrange [-0.5:" << static_cast<double>(depths.size()) - 0.5 << "]\nset xtics (";
    for (size_t i = 0; i < lengths.size(); ++i) script << (i ? ", " : "") << Quote(std::to_string(lengths[i])) << " " << i;
    script << ")\nset ytics (";
    for (size_t i = 0; i < depths.size(); ++i) script << (i ? ", " : "") << Quote(Format("%.2g", depths[i])) << " " << i;
    script << ")\nplot " << Quote((dir / (name + ".dat")).string())
           << " using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette notitle, '' using 1:2:4 with "
              "labels font ',10' notitle\n"
           << SvgAndPngOutputs((dir / name).string(), options.width, options.height);
    outputs.push_back(name + ".svg");
    outputs.push_back(name + ".png");
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "probe.gp", script.str(), outputs);
}

}  // namespace rung::plot
