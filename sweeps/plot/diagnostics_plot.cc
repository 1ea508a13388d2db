#include "sweeps/plot/diagnostics_plot.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>

#include "core/common/atomic_file.h"
#include "sweeps/plot/gnuplot_script.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

// "%.6g" or "NaN" (gnuplot skips NaN points).
std::string DataNumber(double value) { return std::isfinite(value) ? Format("%.6g", value) : "NaN"; }

// One curve of a gap-counting figure: the bucket means of ln Lambda against ln ln n (a data block), the
// OLS line through them with the record's slope, and its key title.
struct GapCurve {
  std::string block;
  double slope = 0, intercept = 0;
  std::string title;
};

// Nothing where no bucket has a finite mean (every row a tie).
std::optional<GapCurve> MakeGapCurve(const std::string& label, const records::GapCounting& gap) {
  double sx = 0, sy = 0;
  int count = 0;
  std::ostringstream block;
  block << "# " << label << "\n";
  for (const records::GapCountingBucket& bucket : gap.buckets) {
    const double n = static_cast<double>(bucket.n), y = bucket.mean_log_lambda;
    const double x = std::log(std::log(n));
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    block << DataNumber(x) << " " << DataNumber(y) << " " << DataNumber(n) << "\n";
    sx += x, sy += y, ++count;
  }
  if (count == 0) return std::nullopt;
  GapCurve curve;
  curve.block = block.str() + "\n\n";
  curve.slope = gap.xi_lambda.value_or(std::nan(""));
  curve.intercept = (sy - curve.slope * sx) / count;
  curve.title = EnhancedLiteral(label) + ": {/Symbol x}_{/Symbol L} = " + Format("%.2f", curve.slope);
  if (gap.xi_lambda_half_iqr) curve.title += " ± " + Format("%.2f", *gap.xi_lambda_half_iqr);
  if (gap.xi_lambda_ci_low && gap.xi_lambda_ci_high) {  // a record of an early release
    curve.title += " [" + Format("%.2f", *gap.xi_lambda_ci_low) + ", " + Format("%.2f", *gap.xi_lambda_ci_high) + "]";
  }
  return curve;
}

// The gnuplot `plot` clauses of `curves` read from `data` (quoted): points, and each finite OLS line.
std::string GapCurvesPlot(const std::vector<GapCurve>& curves, const std::string& data) {
  const std::vector<std::string> colors = {"#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"};
  std::ostringstream plot;
  plot << "plot ";
  for (size_t l = 0; l < curves.size(); ++l) {
    const std::string color = "lc rgb " + Quote(colors[l % colors.size()]);
    plot << (l ? ", \\\n  " : "") << data << " index " << l << " using 1:2 with points pt 7 ps 1.5 " << color
         << " title " << DoubleQuote(curves[l].title);
    if (std::isfinite(curves[l].slope) && std::isfinite(curves[l].intercept)) {
      plot << ", \\\n  " << Format("%.8g", curves[l].slope) << "*x + " << Format("%.8g", curves[l].intercept)
           << " with lines lw 2 " << color << " notitle";
    }
  }
  plot << "\n";
  return plot.str();
}

}  // namespace

StatusOr<std::vector<std::string>> WriteDiagnosticsPlots(const records::AttentionDiagnostics& attention,
                                                         const std::vector<records::ExtrapolationResult>& extrapolation,
                                                         const DiagnosticsPlotOptions& options) {
  if (attention.layers.empty()) return Status::InvalidArgument("the attention diagnostics hold no layer");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  auto path = [&](const std::string& name) { return Quote((dir / name).string()); };
  const std::string svg = SvgTerminal(options.width, options.height);
  const std::string png = PngTerminal(options.width, options.height);
  const double train_length = attention.length > 0 ? static_cast<double>(attention.length) : std::nan("");

  // Data: E_2 by position (one block per layer.head), pair usage matrix, gap counting points.
  std::ostringstream effective, usage, gaps, dominant;
  std::vector<std::string> head_labels, layer_labels;
  std::vector<GapCurve> gap_curves;  // per layer, then pooled
  auto add_gap_curve = [&](const std::string& label, const records::GapCounting& gap) {
    std::optional<GapCurve> curve = MakeGapCurve(label, gap);
    if (!curve) return;  // nothing to draw (every row a tie)
    gaps << curve->block;
    gap_curves.push_back(std::move(*curve));
  };
  int64_t pairs = 0;
  size_t positions = 0;
  std::vector<std::pair<size_t, size_t>> head_style;  // (layer slot: colour, head: dash) per head
  for (const records::AttentionLayer& layer : attention.layers) {
    const int64_t layer_index = layer.layer;
    for (const records::AttentionHead& head : layer.heads) {
      const int64_t head_index = head.head;
      const std::vector<double>& lengths = head.effective_length_by_position;
      effective << "# layer " << layer_index << " head " << head_index << "\n";
      for (size_t i = 0; i < lengths.size(); ++i) effective << (i + 1) << " " << DataNumber(lengths[i]) << "\n";
      effective << "\n\n";
      head_labels.push_back("L" + std::to_string(layer_index) + ".h" + std::to_string(head_index));
      head_style.emplace_back(layer_labels.size(), static_cast<size_t>(std::max<int64_t>(0, head_index)));
      positions = std::max(positions, lengths.size());
      const std::vector<double>& pair_usage = head.pair_usage;
      pairs = std::max<int64_t>(pairs, static_cast<int64_t>(pair_usage.size()));
      double peak = 0;
      for (double value : pair_usage) peak = std::max(peak, value);
      for (size_t f = 0; f < pair_usage.size(); ++f) {
        usage << (f ? " " : "") << DataNumber(peak > 0 ? pair_usage[f] / peak : 0.0);
      }
      usage << "\n";
      if (head.dominant_pair) dominant << *head.dominant_pair << " " << (head_labels.size() - 1) << "\n";
    }
    add_gap_curve("layer " + std::to_string(layer_index), layer.gap_counting);
    layer_labels.push_back(std::to_string(layer_index));
  }
  add_gap_curve("pooled", attention.pooled);
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "effective_length.dat").string(), {effective.str()}));
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "pair_usage.dat").string(), {usage.str()}));
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "dominant_pair.dat").string(), {dominant.str() + "\n"}));
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "gap_counting.dat").string(), {gaps.str()}));

  std::ostringstream script;
  script << "# rung diag: " << options.title << "\n# Redraw with: gnuplot diagnostics.gp (paths are absolute)\n"
         << "set encoding utf8\nset border lw 1.2\nset grid lc rgb '#dddddd'\n";
  auto both = [&](const std::string& name) {
    script << svg << "\nset output " << path(name + ".svg") << "\nreplot\nunset output\n"
           << png << "\nset output " << path(name + ".png") << "\nreplot\nunset output\nreset\n"
           << "set encoding utf8\nset border lw 1.2\nset grid lc rgb '#dddddd'\n";
  };
  const std::string title = DoubleQuote(EnhancedLiteral(options.title));

  // Figure 1: E_2 against position, over the positions measured; one colour per layer, one dash per
  // head, so that no two heads share a style (up to 8 layers).
  const std::vector<std::string> layer_colors = {"#d95f02", "#1b9e77", "#7570b3", "#e7298a",
                                                 "#66a61e", "#e6ab02", "#a6761d", "#1f78b4"};
  const double last = static_cast<double>(std::max<size_t>(positions, 2));
  script << "set title " << title << "\n" << LogAxis("x", 1, last) << LogAxis("y", 1, last)
         << "set xlabel 'query position (keys visible)'\n"
         << "set ylabel 'effective attention length E_2 = 1/{/Symbol S} a^2'\n"
         << "set key outside right top noenhanced\n"
         << "plot x with lines lc rgb '#999999' dt 2 title 'uniform (E_2 = position)'";
  for (size_t h = 0; h < head_labels.size(); ++h) {
    script << ", \\\n  " << path("effective_length.dat") << " index " << h << " using 1:2 with lines lw 1.5 lc rgb "
           << Quote(layer_colors[head_style[h].first % layer_colors.size()]) << " dt "
           << (head_style[h].second % 5 + 1) << " title " << Quote(head_labels[h]);
  }
  script << "\n";
  both("effective_length");

  // Figure 2: pair usage heatmap. The dominant band is another measurement (the pair whose mean
  // contribution varies most with distance, not the most used pair): a mark centred in its cell, and
  // the key says what it measures.
  if (pairs == 0) {
    script << MessageFigure(options.title + ": pair usage", "No frequency-pair usage in these diagnostics.");
  } else {
    const bool any_dominant = !dominant.str().empty();
    script << "set title " << title << "\nset xlabel 'frequency pair (0 = fastest)'\nset ylabel 'layer.head'\n"
           << "set cblabel 'pair usage / head maximum'\nset palette defined (0 '#ffffff', 0.5 '#6baed6', 1 '#08306b')\n"
           << "set cbrange [0:1]\n"
           << "set xrange [-0.5:" << pairs - 0.5 << "]\nset yrange [" << head_labels.size() - 0.5 << ":-0.5]\n"
           << "set xtics 0, " << std::max<int64_t>(1, pairs / 16) << " out nomirror\nset ytics (";
    for (size_t h = 0; h < head_labels.size(); ++h) script << (h ? ", " : "") << Quote(head_labels[h]) << " " << h;
    script << ") out nomirror\nunset grid\nset key outside bottom center noenhanced\n"
           << "plot " << path("pair_usage.dat") << " matrix with image notitle";
    if (any_dominant) {
      script << ", \\\n  " << path("dominant_pair.dat")
             << " using 1:2 with points pt 2 ps 2 lw 3 lc rgb '#d95f02' title "
             << Quote("× dominant band: the pair whose contribution varies most with distance (not the usage maximum)");
    }
    script << "\n";
  }
  both("pair_usage");

  // Figure 3: gap counting (only where some row is not a tie).
  const bool gap_figure = !gap_curves.empty();
  if (gap_figure) {
    script << "set title " << title << "\nset xlabel 'ln ln n'\nset ylabel 'mean ln {/Symbol L} (unscaled score rows)'\n"
           << "set key left top\n"
           << GapCurvesPlot(gap_curves, path("gap_counting.dat"));
    both("gap_counting");
  }

  std::vector<std::string> outputs;
  for (const char* name : {"effective_length", "pair_usage", "gap_counting"}) {
    if (std::string(name) == "gap_counting" && !gap_figure) continue;
    outputs.push_back(std::string(name) + ".svg");
    outputs.push_back(std::string(name) + ".png");
  }

  // Figure 4: per-position loss beyond the training length.
  if (!extrapolation.empty()) {
    std::ostringstream curves;
    std::vector<std::string> titles;
    for (const records::ExtrapolationResult& entry : extrapolation) {
      const std::vector<double>& losses = entry.val_loss_per_position;
      if (losses.empty()) continue;
      curves << "# " << entry.multiple << "x " << entry.method << "\n";
      for (size_t i = 0; i < losses.size(); ++i) curves << (i + 1) << " " << DataNumber(losses[i]) << "\n";
      curves << "\n\n";
      titles.push_back(std::to_string(entry.multiple) + "x, " + entry.method + " (mean " +
                       Format("%.3f", entry.val_loss) + ")");
    }
    if (!titles.empty()) {
      RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "extrapolation.dat").string(), {curves.str()}));
      script << "set title " << title << "\nset xlabel 'position'\nset ylabel 'validation loss (nats)'\n"
             << "set key outside right top noenhanced\n";
      if (std::isfinite(train_length)) {
        script << "set arrow from " << train_length << ", graph 0 to " << train_length
               << ", graph 1 nohead dt 2 lc rgb '#999999'\n"
               << "set label " << Quote("training length T = " + Format("%g", train_length)) << " at " << train_length
               << ", graph 0.97 offset 0.5,0 tc rgb '#555555'\n";
      }
      script << "plot ";
      for (size_t i = 0; i < titles.size(); ++i) {
        script << (i ? ", \\\n  " : "") << path("extrapolation.dat") << " index " << i << " using 1:2 with lines lw 1.5 title "
               << Quote(titles[i]);
      }
      script << "\n";
      both("extrapolation");
      outputs.push_back("extrapolation.svg");
      outputs.push_back("extrapolation.png");
    }
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "diagnostics.gp", script.str(), outputs);
}

StatusOr<std::vector<std::string>> WriteFrequencyProfilePlot(const std::vector<FrequencyProfile>& profiles,
                                                             double rope_base, double train_length,
                                                             const DiagnosticsPlotOptions& options) {
  if (profiles.empty()) return Status::InvalidArgument("no learned frequencies to draw");
  if (!(rope_base > 1) || !(train_length > 0)) {
    return Status::InvalidArgument("a frequency profile needs a RoPE base > 1 and a training length > 0");
  }
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  auto path = [&](const std::string& name) { return Quote((dir / name).string()); };
  size_t pairs = 0;
  for (const FrequencyProfile& profile : profiles) pairs = std::max(pairs, profile.theta.size());
  std::ostringstream data;
  data << "# RoPE\n";  // index 0: theta_f = b^(-f/pairs)
  for (size_t f = 0; f < pairs; ++f) {
    const double theta = std::pow(rope_base, -static_cast<double>(f) / static_cast<double>(pairs));
    data << f << " " << DataNumber(2 * M_PI / theta / train_length) << "\n";
  }
  data << "\n\n";
  for (const FrequencyProfile& profile : profiles) {
    data << "# " << profile.label << "\n";
    for (size_t f = 0; f < profile.theta.size(); ++f) {
      const double theta = profile.theta[f];
      data << f << " " << DataNumber(theta > 0 ? 2 * M_PI / theta / train_length : std::nan("")) << "\n";
    }
    data << "\n\n";
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "frequency_profile.dat").string(), {data.str()}));
  std::ostringstream script;
  script << "# rung diag: learned frequencies of " << options.title << "\nset encoding utf8\nset border lw 1.2\n"
         << "set grid lc rgb '#dddddd'\nset title " << DoubleQuote(EnhancedLiteral(options.title)) << "\n"
         << "set logscale y\nset format y '10^{%L}'\nset xlabel 'frequency pair f (0 = fastest)'\n"
         << "set ylabel 'wavelength 2{/Symbol p}/{/Symbol q}_f over the training length'\n"
         << "set xrange [-0.5:" << pairs - 0.5 << "]\nset key outside right top noenhanced\n"
         << "plot " << path("frequency_profile.dat") << " index 0 using 1:2 with linespoints lc rgb '#000000' dt 2 pt 6 "
         << "title 'RoPE (b = " << Format("%g", rope_base) << ")', 1 with lines lc rgb '#999999' title 'training length', "
         << "2.2 with lines lc rgb '#d95f02' dt 3 title " << Quote("LeRoPE's reported dominant band (2.2x)");
  // Each profile its own point shape and dash, so that profiles that coincide (RoPE's own, or two
  // forms of one variant) stay visible one over the other.
  constexpr int kPointTypes[] = {7, 5, 9, 13, 11, 4, 6, 8, 10, 12};
  for (size_t i = 0; i < profiles.size(); ++i) {
    script << ", \\\n  " << path("frequency_profile.dat") << " index " << i + 1 << " using 1:2 with linespoints lw 2 pt "
           << kPointTypes[i % std::size(kPointTypes)] << " ps 1.3 dt " << 1 + i % 4 << " title "
           << Quote(profiles[i].label);
  }
  script << "\n" << SvgAndPngOutputs((dir / "frequency_profile").string(), options.width, options.height);
  return RenderGnuplot(options.gnuplot, dir.string(), "frequency_profile.gp", script.str(),
                       {"frequency_profile.svg", "frequency_profile.png"});
}

StatusOr<std::vector<std::string>> WriteNiahGridPlot(const records::NiahGridDiagnostics& grid,
                                                     const DiagnosticsPlotOptions& options) {
  if (grid.grids.empty()) return Status::InvalidArgument("the NIAH grid record holds no grid");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  auto path = [&](const std::string& name) { return Quote((dir / name).string()); };
  std::ostringstream script;
  script << "# rung diag: NIAH grid of " << options.title << "\nset encoding utf8\nset border lw 1.2\n";
  std::vector<std::string> outputs;
  for (const records::NiahGridAtLength& entry : grid.grids) {
    const std::string name = "niah_" + std::to_string(entry.multiple) + "x_" +
                             FileNamePart(entry.method.empty() ? std::string("none") : entry.method);
    std::ostringstream data;  // rows: depths; columns: distractor counts
    for (const std::vector<double>& row : entry.accuracy) {
      for (size_t d = 0; d < row.size(); ++d) data << (d ? " " : "") << DataNumber(row[d]);
      data << "\n";
    }
    RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / (name + ".dat")).string(), {data.str()}));
    script << "reset\nset encoding utf8\nset title "
           << DoubleQuote(EnhancedLiteral(options.title + ": multi-key NIAH at " + std::to_string(entry.length) +
                                          " tokens (" + std::to_string(entry.multiple) + "x, " + entry.method + ")"))
           << "\nset xlabel 'distractor pairs'\nset ylabel 'needle depth'\nset cblabel 'answer accuracy'\n"
           << "set cbrange [0:1]\nset palette defined (0 '#b2182b', 0.5 '#f7f7f7', 1 '#2166ac')\n"
           << "set xrange [-0.5:" << static_cast<double>(grid.distractors.size()) - 0.5 << "]\n"
           << "set yrange [-0.5:" << static_cast<double>(grid.depths.size()) - 0.5 << "]\nset ytics (";
    for (size_t i = 0; i < grid.depths.size(); ++i) {
      script << (i ? ", " : "") << Quote(Format("%.1f", grid.depths[i])) << " " << i;
    }
    script << ")\nplot " << path(name + ".dat") << " matrix with image notitle\n"
           << SvgAndPngOutputs((dir / name).string(), options.width, options.height);
    outputs.push_back(name + ".svg");
    outputs.push_back(name + ".png");
  }
  return RenderGnuplot(options.gnuplot, dir.string(), "niah_grid.gp", script.str(), outputs);
}

StatusOr<std::vector<std::string>> WriteBandAblationPlot(const records::BandAblationDiagnostics& ablation,
                                                         const DiagnosticsPlotOptions& options) {
  if (ablation.pairs.empty()) return Status::InvalidArgument("the band ablation record holds no pair");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  // pair, reverted delta, zeroed delta (NaN where the record predates it)
  std::ostringstream data;
  bool zeroed = false;
  for (const records::BandAblationPair& pair : ablation.pairs) {
    zeroed = zeroed || pair.zeroed_delta.has_value();
    data << DataNumber(static_cast<double>(pair.pair)) << " " << DataNumber(pair.delta) << " "
         << DataNumber(pair.zeroed_delta.value_or(std::numeric_limits<double>::quiet_NaN())) << "\n";
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "band_ablation.dat").string(), {data.str()}));
  std::ostringstream script;
  const std::string file = Quote((dir / "band_ablation.dat").string());
  script << "# rung diag: band ablation of " << options.title << "\nset encoding utf8\nset border lw 1.2\n"
         << "set grid ytics lc rgb '#dddddd'\nset title "
         << DoubleQuote(EnhancedLiteral(options.title + ": leave-one-out band ablations on " + std::to_string(ablation.sequences) +
                                       " sequences at T"))
         << "\nset xlabel 'frequency pair ablated (0 = fastest)'\n"
         << "set ylabel 'validation loss change (nats)'\nset style fill solid 0.8\n"
         << "set xrange [-0.7:" << static_cast<double>(ablation.pairs.size()) - 0.3 << "]\nset key top left noenhanced\n"
         << "plot " << file;
  if (zeroed) {
    script << " using ($1-0.18):2:(0.34) with boxes lc rgb '#2166ac' title 'reverted to RoPE', " << file
           << " using ($1+0.18):3:(0.34) with boxes lc rgb '#b2182b' title 'zeroed (LeRoPE D.1)'";
  } else {
    script << " using 1:2:(0.7) with boxes lc rgb '#2166ac' title 'reverted to RoPE'";
  }
  script << ", 0 with lines lc rgb '#000000' notitle\n"
         << SvgAndPngOutputs((dir / "band_ablation").string(), options.width, options.height);
  return RenderGnuplot(options.gnuplot, dir.string(), "band_ablation.gp", script.str(),
                       {"band_ablation.svg", "band_ablation.png"});
}

StatusOr<std::vector<std::string>> WriteHeadInfluencePlot(const records::HeadInfluenceDiagnostics& influence,
                                                          const DiagnosticsPlotOptions& options) {
  if (influence.heads.empty()) return Status::InvalidArgument("the head influence record holds no head");
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  // index, all, frequency, scale (NaN where not measured), label
  std::ostringstream data;
  const double none = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < influence.heads.size(); ++i) {
    const records::HeadInfluence& head = influence.heads[i];
    data << i << " " << DataNumber(head.all.value_or(none)) << " " << DataNumber(head.frequency.value_or(none)) << " "
         << DataNumber(head.scale.value_or(none)) << " L" << head.layer << "H" << head.head << "\n";
  }
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "head_influence.dat").string(), {data.str()}));
  const std::string file = Quote((dir / "head_influence.dat").string());
  std::ostringstream script;
  script << "# rung diag: head influence of " << options.title << "\nset encoding utf8\nset border lw 1.2\n"
         << "set grid ytics lc rgb '#dddddd'\nset title "
         << DoubleQuote(EnhancedLiteral(options.title + ": head influence (AdaRoPE B.3), " + std::to_string(influence.length) +
                                       " tokens"))
         << "\nset xlabel 'query head (layer, head)'\nset ylabel 'validation loss change (nats)'\n"
         << "set style fill solid 0.8\nset key top left noenhanced\nset xtics rotate by -45 font ',8'\n"
         << "set xrange [-0.7:" << static_cast<double>(influence.heads.size()) - 0.3 << "]\n"
         << "plot " << file << " using ($1-0.27):2:(0.26):xtic(5) with boxes lc rgb '#4d4d4d' title 'all reset', " << file
         << " using ($1):3:(0.26) with boxes lc rgb '#2166ac' title 'AdaFreq reset (per " << influence.frequency_unit << ")', "
         << file << " using ($1+0.27):4:(0.26) with boxes lc rgb '#b2182b' title 'AdaScale reset (per " << influence.scale_unit
         << ")', 0 with lines lc rgb '#000000' notitle\n"
         << SvgAndPngOutputs((dir / "head_influence").string(), options.width, options.height);
  return RenderGnuplot(options.gnuplot, dir.string(), "head_influence.gp", script.str(),
                       {"head_influence.svg", "head_influence.png"});
}

StatusOr<std::vector<std::string>> WriteGapCountingByLengthPlot(const records::AttentionDiagnostics& at_t,
                                                                const std::vector<records::AttentionDiagnostics>& beyond,
                                                                const DiagnosticsPlotOptions& options) {
  std::ostringstream data;
  std::vector<GapCurve> curves;
  for (size_t i = 0; i <= beyond.size(); ++i) {
    const records::AttentionDiagnostics& attention = i == 0 ? at_t : beyond[i - 1];
    const std::string label = "L = " + std::to_string(attention.length) + " (" +
                              std::to_string(attention.multiple.value_or(1)) + "x " + attention.method.value_or("none") + ")";
    std::optional<GapCurve> curve = MakeGapCurve(label, attention.pooled);
    if (!curve) continue;
    data << curve->block;
    curves.push_back(std::move(*curve));
  }
  if (curves.empty()) return std::vector<std::string>();  // every row a tie at every length: nothing to draw
  RUNG_RETURN_IF_ERROR(MakeOutputFolder(options.out_dir));
  const fs::path dir = fs::absolute(options.out_dir);
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((dir / "gap_counting_lengths.dat").string(), {data.str()}));
  std::ostringstream script;
  script << "# rung diag: gap counting at each evaluated length of " << options.title
         << "\nset encoding utf8\nset border lw 1.2\nset grid lc rgb '#dddddd'\nset title "
         << DoubleQuote(EnhancedLiteral(options.title + ": gap counting at each evaluated length L (pooled rows, n-grid of L)"))
         << "\nset xlabel 'ln ln n'\nset ylabel 'mean ln {/Symbol L} (unscaled score rows)'\nset key left top\n"
         << GapCurvesPlot(curves, Quote((dir / "gap_counting_lengths.dat").string()))
         << SvgAndPngOutputs((dir / "gap_counting_lengths").string(), options.width, options.height);
  return RenderGnuplot(options.gnuplot, dir.string(), "gap_counting_lengths.gp", script.str(),
                       {"gap_counting_lengths.svg", "gap_counting_lengths.png"});
}

}  // namespace rung::plot
