#include "sweeps/plot/tuning_plot.h"

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

std::string Value(double value) { return std::isfinite(value) ? Format("%.6g", value) : "NaN"; }

}  // namespace

StatusOr<std::vector<std::string>> WriteTuningPlots(const std::vector<TuningCurve>& curves,
                                                    const std::vector<TuningLaw>& laws,
                                                    const TuningPlotOptions& options) {
  std::map<std::string, std::vector<const TuningCurve*>> by_rung;
  for (const TuningCurve& curve : curves) {
    if (!curve.points.empty()) by_rung[curve.rung].push_back(&curve);
  }
  if (by_rung.empty()) return Status::InvalidArgument("no tuning cell has a scored value to draw");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  std::ostringstream script;
  script << "# rung plot: the search of " << options.key << " in " << options.title << "\nset encoding utf8\n";
  std::vector<std::string> outputs;
  // One colour per method in every figure: its place among the methods, in the order they come.
  std::vector<std::string> methods;
  for (const TuningCurve& curve : curves) {
    if (std::find(methods.begin(), methods.end(), curve.method) == methods.end()) methods.push_back(curve.method);
  }
  const auto colour = [&](const std::string& method) {
    return std::to_string(std::find(methods.begin(), methods.end(), method) - methods.begin() + 1);
  };

  // The metric against the value, per rung: each method's line, its chosen value marked.
  for (const auto& [rung, lines] : by_rung) {
    const std::string name = "lr_sweep_" + FileNamePart(rung);
    const std::string data_path = (dir / (name + ".dat")).string();
    std::ostringstream data;
    for (const TuningCurve* curve : lines) {
      data << "# " << curve->method << "\n";
      for (const auto& [value, metric] : curve->points) data << Format("%.6e", value) << " " << Value(metric) << "\n";
      data << "\n\n";
    }
    for (const TuningCurve* curve : lines) {
      data << "# " << curve->method << " chosen\n";
      for (const auto& [value, metric] : curve->points) {
        if (curve->chosen && std::fabs(value / *curve->chosen - 1) < 1e-9) {
          data << Format("%.6e", value) << " " << Value(metric) << "\n";
        }
      }
      data << "\n\n";
    }
    RUNG_RETURN_IF_ERROR(WriteFileAtomically(data_path, {data.str()}));
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const TuningCurve* curve : lines) {
      for (const auto& point : curve->points) {
        if (point.first > 0) lo = std::min(lo, point.first), hi = std::max(hi, point.first);
      }
    }
    script << "reset\nset border lw 1.2\nset grid lc rgb '#dddddd'\n" << LogAxis("x", lo / 1.2, hi * 1.2)
           << "set title " << DoubleQuote(EnhancedLiteral(options.title + ": " + options.key + " at rung " + rung))
           << "\nset xlabel " << DoubleQuote(EnhancedLiteral(options.key + " (log scale)")) << "\nset ylabel "
           << DoubleQuote(EnhancedLiteral("final " + options.metric)) << "\nset key outside right top noenhanced\nplot ";
    for (size_t i = 0; i < lines.size(); ++i) {
      script << (i ? ", \\\n  " : "") << Quote(data_path) << " index " << i
             << " using 1:2 with linespoints lw 1.5 pt 7 ps 0.8 lc " << colour(lines[i]->method) << " title "
             << Quote(lines[i]->method);
    }
    for (size_t i = 0; i < lines.size(); ++i) {
      // chosen: a large filled mark when bracketed, an open one when not
      const bool bracketed = lines[i]->bracketed;
      script << ", \\\n  " << Quote(data_path) << " index " << lines.size() + i << " using 1:2 with points pt "
             << (bracketed ? 9 : 8) << " ps 2.5 lc " << colour(lines[i]->method) << " title "
             << Quote(lines[i]->method + (bracketed ? " best (bracketed)" : " best (unbracketed)"));
    }
    script << "\n" << SvgAndPngOutputs((dir / name).string(), options.width, options.height);
    outputs.push_back(name + ".svg");
    outputs.push_back(name + ".png");
  }

  // Each method's best value against N, with its law.
  std::map<std::string, std::vector<std::pair<double, double>>> best_by_method;
  for (const TuningCurve& curve : curves) {
    if (curve.chosen && curve.n > 0) best_by_method[curve.method].emplace_back(curve.n, *curve.chosen);
  }
  if (!best_by_method.empty()) {
    const std::string name = "best_lr";
    const std::string data_path = (dir / (name + ".dat")).string();
    std::ostringstream data;
    for (const auto& [method, points] : best_by_method) {
      data << "# " << method << "\n";
      for (const auto& [n, value] : points) data << Format("%.6e", n) << " " << Format("%.6e", value) << "\n";
      data << "\n\n";
    }
    RUNG_RETURN_IF_ERROR(WriteFileAtomically(data_path, {data.str()}));
    double n_lo = std::numeric_limits<double>::infinity(), n_hi = 0, v_lo = n_lo, v_hi = 0;
    for (const auto& [method, points] : best_by_method) {
      for (const auto& [n, value] : points) {
        n_lo = std::min(n_lo, n), n_hi = std::max(n_hi, n);
        if (value > 0) v_lo = std::min(v_lo, value), v_hi = std::max(v_hi, value);
      }
    }
    script << "reset\nset border lw 1.2\nset grid lc rgb '#dddddd'\n" << LogAxis("x", n_lo / 1.3, n_hi * 1.3)
           << LogAxis("y", v_lo / 1.5, v_hi * 1.5)
           << "set title " << DoubleQuote(EnhancedLiteral(options.title + ": best " + options.key + " per rung"))
           << "\nset xlabel 'parameters N (total, positional excluded)'\nset ylabel "
           << DoubleQuote(EnhancedLiteral("best " + options.key))
           << "\nset key outside right top noenhanced\n";
    size_t index = 0;
    std::string plot = "plot ";
    for (const auto& [method, points] : best_by_method) {
      plot += (index ? ", \\\n  " : "") + Quote(data_path) + " index " + std::to_string(index) +
              " using 1:2 with points pt 7 ps 1.5 lc " + colour(method) + " title " + Quote(method);
      for (const TuningLaw& law : laws) {
        if (law.method != method) continue;
        plot += ", \\\n  " + Format("%.6e", law.coefficient) + " * x**(" + Format("%.6f", law.exponent) +
                ") with lines lw 1.5 dt 2 lc " + colour(method) + " title " +
                Quote(method + ": " + Format("%.3g", law.coefficient) + " N^" + Format("%.3f", law.exponent));
      }
      ++index;
    }
    script << plot << "\n" << SvgAndPngOutputs((dir / name).string(), options.width, options.height);
    outputs.push_back(name + ".svg");
    outputs.push_back(name + ".png");
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "tuning.gp", script.str(), outputs);
}

}  // namespace rung::plot
