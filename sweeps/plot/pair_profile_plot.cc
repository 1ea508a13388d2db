#include "sweeps/plot/pair_profile_plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "core/common/atomic_file.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

// The x tics of a panel: each bin at its index, labelled by its first distance (every other label
// once there are many bins).
std::string DistanceTics(const std::vector<int64_t>& edges) {
  std::ostringstream tics;
  const size_t bins = edges.size() - 1;
  const size_t step = bins > 12 ? (bins + 11) / 12 : 1;
  tics << "set xtics (";
  for (size_t b = 0; b < bins; b += step) {
    tics << (b ? ", " : "") << Quote(std::to_string(edges[b])) << " " << b;
  }
  tics << ") rotate by 45 right font ',9'\n";
  return tics.str();
}

}  // namespace

StatusOr<std::vector<std::string>> WritePairProfilePlots(const records::AttentionDiagnostics& attention,
                                                         const DiagnosticsPlotOptions& options) {
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  std::ostringstream script;
  script << "# rung diag: pair-by-distance profiles of " << options.title << "\n";
  std::vector<std::string> outputs;
  for (const records::AttentionLayer& layer : attention.layers) {
    const std::vector<int64_t>& edges = layer.pair_profile_edges;
    const std::vector<records::AttentionHead>& heads = layer.heads;
    if (edges.size() < 2 || heads.empty()) continue;
    const int64_t layer_index = layer.layer;
    const std::string stem = "pair_profile_L" + std::to_string(layer_index);
    // One data file per head (a matrix: a row per pair, a column per bin) and the layer's colour range.
    double peak = 0;
    std::vector<std::string> panels;
    std::vector<std::string> files;
    size_t pairs = 0;
    for (const records::AttentionHead& head : heads) {
      const std::vector<std::vector<double>>& profile = head.pair_profile;
      if (profile.empty()) continue;
      std::ostringstream data;
      for (const std::vector<double>& row : profile) {
        for (size_t b = 0; b + 1 < edges.size(); ++b) {
          const double value = b < row.size() ? row[b] : std::nan("");
          if (std::isfinite(value)) peak = std::max(peak, std::fabs(value));
          data << (b ? " " : "") << (std::isfinite(value) ? Format("%.8g", value) : std::string("NaN"));
        }
        data << "\n";
      }
      pairs = std::max(pairs, profile.size());
      const std::string file = stem + "_h" + std::to_string(head.head) + ".dat";
      RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / file).string(), {data.str()}));
      files.push_back(file);
      panels.push_back("head " + std::to_string(head.head));
    }
    if (files.empty()) continue;
    if (peak <= 0) peak = 1;
    const size_t columns = static_cast<size_t>(std::ceil(std::sqrt(static_cast<double>(files.size()))));
    const size_t rows = (files.size() + columns - 1) / columns;
    std::ostringstream body;
    body << "set multiplot layout " << rows << "," << columns << " title "
         << DoubleQuote(EnhancedLiteral(options.title + ": layer " + std::to_string(layer_index) +
                                        ", mean pair term of the unscaled logit by relative distance (grey: no "
                                        "visible pair)"))
         << "\n";
    for (size_t p = 0; p < files.size(); ++p) {
      body << "set title " << Quote(panels[p]) << "\n"
           << "plot " << Quote((dir / files[p]).string()) << " matrix with image notitle\n";
    }
    body << "unset multiplot\n";
    script << "reset\nset encoding utf8\nunset key\n"
           << "set palette defined (-1 '#2166ac', 0 '#f7f7f7', 1 '#b2182b')\n"
           << "set cbrange [" << Format("%.8g", -peak) << ":" << Format("%.8g", peak) << "]\n"
           << "set cblabel 'mean pair term' font ',9'\nset cbtics font ',8'\n"
           << "set xrange [-0.5:" << edges.size() - 1.5 << "]\nset yrange [-0.5:" << pairs - 0.5 << "]\n"
           << DistanceTics(edges) << "set ytics " << std::max<size_t>(1, pairs / 8) << " font ',9'\n"
           << "set object 1 rectangle from graph 0,0 to graph 1,1 behind fillcolor rgb '#bdbdbd' fillstyle solid "
              "noborder\n"
           << "set xlabel 'relative distance (bin start)' font ',9'\nset ylabel 'pair (0 = fastest)' font ',9'\n";
    for (const std::string& extension : {std::string("svg"), std::string("png")}) {
      script << (extension == "svg" ? SvgTerminal(options.width, options.height)
                                    : PngTerminal(options.width, options.height))
             << "\nset output " << Quote((dir / (stem + "." + extension)).string()) << "\n"
             << body.str() << "unset output\n";
    }
    outputs.push_back(stem + ".svg");
    outputs.push_back(stem + ".png");
  }
  if (outputs.empty()) {
    return Status::InvalidArgument(
        "the diagnostics record has no pair-by-distance profile (train.diagnostics_pair_profile_bins was 0, or "
        "the record is from a release before it)");
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "pair_profile.gp", script.str(), outputs);
}

}  // namespace rung::plot
