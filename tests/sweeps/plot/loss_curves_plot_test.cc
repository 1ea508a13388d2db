#include "sweeps/plot/loss_curves_plot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/sweeps/plot_test_files.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

LossCurve Curve(const std::string& cell, int seed, bool baseline, double offset) {
  LossCurve curve;
  curve.rung = "L1-d32";
  curve.cell = cell;
  curve.label = cell + " seed " + std::to_string(seed);
  curve.baseline = baseline;
  for (double compute : {2e11, 4e11, 6e11, 8e11}) curve.points.push_back({compute, 3.0 - compute / 1e12 + offset});
  return curve;
}

// One colour and key entry per cell with its seeds counted, the baseline black and first, the metric's
// underscore printed as written, and a narrow compute range with several labelled tics.
TEST(LossCurvesPlot, OneStylePerCellTheBaselineFirstAndTheMetricNameAsWritten) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = plot_testing::FreshDir("rung_curves_test_", "cells");
  LossCurvesOptions options;
  options.out_dir = dir.string();
  options.title = "quick_start";
  const std::vector<LossCurve> curves = {Curve("lerope", 0, false, 0.0), Curve("lerope", 1, false, 0.01),
                                         Curve("rope", 0, true, 0.0), Curve("rope", 1, true, 0.01)};
  StatusOr<std::vector<std::string>> files = WriteLossCurvesPlots(curves, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 2u);
  const std::string script = plot_testing::Read(dir / "loss_curves.gp");
  EXPECT_NE(script.find("set ylabel 'val_loss (nats)' noenhanced"), std::string::npos) << script;
  EXPECT_NE(script.find("set xtics ("), std::string::npos) << script;
  const size_t rope = script.find("title 'rope (baseline) (2 seeds)'");
  const size_t lerope = script.find("title 'lerope (2 seeds)'");
  ASSERT_NE(rope, std::string::npos) << script;
  ASSERT_NE(lerope, std::string::npos) << script;
  EXPECT_LT(rope, lerope) << "the baseline is drawn first, under the variants";
  EXPECT_EQ(std::count(script.begin(), script.end(), '\n') > 0, true);
  size_t titled = 0;
  for (size_t at = script.find(" title '"); at != std::string::npos; at = script.find(" title '", at + 1)) ++titled;
  EXPECT_EQ(titled, 2u) << "one key entry per cell";
  EXPECT_NE(plot_testing::Read(dir / "loss_curves_L1-d32.svg").find("val_loss"), std::string::npos);
  EXPECT_EQ(plot_testing::Read(dir / "gnuplot.log").find("line "), std::string::npos);  // no warning on a line
  fs::remove_all(dir);
}

// A rung whose cells the caller grouped (a crowded rung split by its axes beyond the baseline's) is one
// figure per group, each with its own baseline cell and a title naming the group.
TEST(LossCurvesPlot, GroupedCellsOfARungAreOneFigurePerGroup) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = plot_testing::FreshDir("rung_curves_test_", "groups");
  LossCurvesOptions options;
  options.out_dir = dir.string();
  options.title = "nrw";
  std::vector<LossCurve> curves;
  for (const std::string width : {"1", "16"}) {
    for (const auto& [variant, baseline] : {std::pair<std::string, bool>{"rope", true}, {"lerope", false}}) {
      LossCurve curve = Curve("window_width " + width + " " + variant, 0, baseline, 0.0);
      curve.group = "window_width " + width;
      curves.push_back(curve);
    }
  }
  StatusOr<std::vector<std::string>> files = WriteLossCurvesPlots(curves, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(plot_testing::FileNames(*files),
            (std::vector<std::string>{"loss_curves_L1-d32_window_width_1.svg", "loss_curves_L1-d32_window_width_1.png",
                                      "loss_curves_L1-d32_window_width_16.svg", "loss_curves_L1-d32_window_width_16.png"}));
  const std::string script = plot_testing::Read(dir / "loss_curves.gp");
  EXPECT_NE(script.find("nrw: rung L1-d32, window"), std::string::npos) << script;
  EXPECT_NE(script.find("width 16\""), std::string::npos) << script;
  EXPECT_TRUE(fs::exists(dir / "loss_curves_L1-d32_window_width_16.png"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung::plot
