#include "sweeps/plot/probe_plot.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/common/atomic_file.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {

StatusOr<std::vector<std::string>> WriteProbePlot(const std::vector<records::ProbeResult>& cells,
                                                  const DiagnosticsPlotOptions& options) {
  namespace fs = std::filesystem;
  if (cells.empty()) return Status::InvalidArgument("the probe holds no cell");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
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
