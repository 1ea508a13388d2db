#include "sweeps/plot/law_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sweeps/fit/law_report.h"
#include "sweeps/fit/law_runs.h"
#include "tests/sweeps/plot_test_files.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;
using plot_testing::FileNames;
using plot_testing::FreshDir;
using plot_testing::Read;

bool GnuplotInstalled() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

// Hoffmann et al.'s fitted law (their eq. 10), and a variant a little better at every size.
const fit::ChinchillaLaw kHoffmann{1.69, 406.4, 410.7, 0.34, 0.28};
const fit::ChinchillaLaw kBetter{1.69, 360.0, 410.7, 0.34, 0.28};

// Runs of `law` on an IsoFLOP grid: the same 7 sizes at 3 budgets (the law's optimum, 8e7 to 6.5e8,
// inside the sizes at each), each loss times exp(0.003 N(0, 1)).
std::vector<fit::LawRun> IsoflopRuns(const std::string& variant, const fit::ChinchillaLaw& law, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<fit::LawRun> runs;
  for (double c : {1e18, 1e19, 1e20}) {
    for (double n : {2e7, 4e7, 8e7, 1.6e8, 3.2e8, 6.4e8, 1.3e9}) {
      const double d = c / (6 * n);
      runs.push_back({variant, n, d, law.Predict(n, d) * std::exp(0.003 * normal(generator))});
    }
  }
  return runs;
}

// rope and lerope on the grid, fitted with a small bootstrap: every figure has something to draw.
const fit::LawReport& IsoflopReport() {
  static const fit::LawReport report = [] {
    fit::LawRuns runs;
    runs.source = "synthetic";
    runs.metric = "val_loss";
    runs.runs = IsoflopRuns("rope", kHoffmann, 1);
    for (const fit::LawRun& run : IsoflopRuns("lerope", kBetter, 2)) runs.runs.push_back(run);
    fit::LawOptions options;
    options.baseline = "rope";
    options.bootstrap = 24;
    options.seed = 3;
    options.at = {1e18, 1e19, 1e20, 1e21, 1e22};
    StatusOr<fit::LawReport> fitted = fit::FitLaws(runs, options);
    EXPECT_TRUE(fitted.ok()) << fitted.status().message();
    return fitted.ok() ? *fitted : fit::LawReport();
  }();
  return report;
}

// A data file's indices: each one's "# name" line and its rows of numbers (NaN where "NaN").
struct DataIndex {
  std::string name;
  std::vector<std::vector<double>> rows;
};
std::vector<DataIndex> Indices(const std::string& text) {
  std::vector<DataIndex> blocks;
  std::istringstream lines(text);
  bool open = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) {
      open = false;
      continue;
    }
    if (line[0] == '#') {
      // A comment opens an index, or names the one it follows (the header's lines come first).
      if (!open || blocks.back().rows.size() > 0) {
        blocks.push_back({line.substr(2), {}});
      } else {
        blocks.back().name = line.substr(2);
      }
      open = true;
      continue;
    }
    std::istringstream fields(line);
    std::vector<double> row;
    for (std::string field; fields >> field;) row.push_back(std::strtod(field.c_str(), nullptr));
    if (blocks.empty()) blocks.push_back({"", {}});
    blocks.back().rows.push_back(row);
  }
  return blocks;
}

void ExpectRelativelyNear(double actual, double expected, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-7 * std::fabs(expected)) << what;
}

TEST(LawPlot, AnIsoflopGridGetsEveryFigureAsSvgAndPng) {
  if (!GnuplotInstalled()) GTEST_SKIP() << "gnuplot not installed (deploy/install-deps.sh installs gnuplot-nox)";
  const fit::LawReport& report = IsoflopReport();
  ASSERT_TRUE(report.isoflop.has_value()) << report.isoflop_why;
  ASSERT_TRUE(report.rollout.has_value());
  const fs::path dir = FreshDir("rung_law_plot_test_", "grid");
  LawPlotOptions options;
  options.out_dir = dir.string();
  StatusOr<std::vector<std::string>> files = WriteLawFigures(report, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(FileNames(*files),
            (std::vector<std::string>{"law_loss_vs_n.svg", "law_loss_vs_n.png", "law_loss_vs_d.svg", "law_loss_vs_d.png",
                                      "isoflop.svg", "isoflop.png", "law_multipliers.svg", "law_multipliers.png",
                                      "law_residuals.svg", "law_residuals.png", "law_rollout.svg", "law_rollout.png"}));
  for (const std::string& file : *files) EXPECT_GT(fs::file_size(file), 1000u) << file;
  EXPECT_EQ(Read(dir / "law_rollout.png").substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(Read(dir / "gnuplot.log"), "") << "gnuplot warned";
  EXPECT_TRUE(fs::exists(dir / "laws.gp"));
  const std::string svg = Read(dir / "law_loss_vs_n.svg");
  EXPECT_NE(svg.find("validation loss L (nats)"), std::string::npos);
  EXPECT_NE(svg.find("lerope"), std::string::npos);
  EXPECT_NE(Read(dir / "law_multipliers.svg").find("extrapolated"), std::string::npos);
  fs::remove_all(dir);
}

TEST(LawPlot, TheDataFilesHoldTheReportsNumbers) {
  if (!GnuplotInstalled()) GTEST_SKIP() << "gnuplot not installed";
  const fit::LawReport& report = IsoflopReport();
  ASSERT_TRUE(report.isoflop.has_value()) << report.isoflop_why;
  const fs::path dir = FreshDir("rung_law_plot_test_", "numbers");
  LawPlotOptions options;
  options.out_dir = dir.string();
  ASSERT_TRUE(WriteLawFigures(report, options).ok());

  // An IsoFLOP grid's runs are grouped by budget: 3 per variant, 7 runs each, rope's first.
  const std::vector<DataIndex> points = Indices(Read(dir / "law_loss_vs_n_points.dat"));
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0].name, "rope | C = 10^{18} FLOPs");
  EXPECT_EQ(points[5].name, "lerope | C = 10^{20} FLOPs");
  for (const DataIndex& block : points) EXPECT_EQ(block.rows.size(), 7u) << block.name;
  // Each section is the variant's law along its budget: L(N, C / 6N).
  const std::vector<DataIndex> sections = Indices(Read(dir / "law_loss_vs_n_sections.dat"));
  ASSERT_EQ(sections.size(), 6u);
  for (const std::vector<double>& row : sections[4].rows) {  // lerope, 1e19
    ASSERT_EQ(row.size(), 3u);
    EXPECT_NEAR(6 * row[0] * row[1], 1e19, 1e19 * 0.03);
    ExpectRelativelyNear(row[2], report.variants[1].law.Predict(row[0], row[1]), "section loss");
  }

  // The parabolas' minima are the report's N*, with their intervals.
  const std::vector<DataIndex> minima = Indices(Read(dir / "isoflop_minima.dat"));
  ASSERT_EQ(minima.size(), report.isoflop->variants.size());
  int intervals = 0;
  for (size_t variant = 0; variant < minima.size(); ++variant) {
    const std::vector<fit::IsoflopBudget>& budgets = report.isoflop->variants[variant].budgets;
    ASSERT_EQ(minima[variant].rows.size(), budgets.size());
    for (size_t budget = 0; budget < budgets.size(); ++budget) {
      const std::vector<double>& row = minima[variant].rows[budget];
      ASSERT_TRUE(budgets[budget].n_opt.has_value()) << budgets[budget].why;
      ExpectRelativelyNear(row[1], *budgets[budget].n_opt, "N*");
      ExpectRelativelyNear(row[2], *budgets[budget].loss_opt, "L at N*");
      // The interval where the bootstrap gave one (replicates that lose a budget's minimum leave it none).
      if (budgets[budget].n_opt_low) {
        ++intervals;
        ExpectRelativelyNear(row[3], *budgets[budget].n_opt_low, "N* low");
        ExpectRelativelyNear(row[4], *budgets[budget].n_opt_high, "N* high");
      } else {
        EXPECT_TRUE(std::isnan(row[3]) && std::isnan(row[4]));
      }
    }
  }
  EXPECT_GT(intervals, 0);

  // The band's ends are the predicted multipliers' intervals: lerope's rule allocation first.
  const std::vector<DataIndex> multipliers = Indices(Read(dir / "law_multipliers.dat"));
  ASSERT_EQ(multipliers.size(), 2u);
  EXPECT_EQ(multipliers[0].name, "lerope | rule");
  EXPECT_EQ(multipliers[1].name, "lerope | optimal");
  std::vector<const fit::PredictedMultiplier*> rule;
  for (const fit::PredictedMultiplier& row : report.multipliers) {
    if (row.allocation == "rule") rule.push_back(&row);
  }
  ASSERT_EQ(multipliers[0].rows.size(), rule.size());
  for (size_t index = 0; index < rule.size(); ++index) {
    const std::vector<double>& row = multipliers[0].rows[index];
    ExpectRelativelyNear(row[0], rule[index]->compute, "compute");
    ASSERT_TRUE(rule[index]->multiplier && rule[index]->interval) << rule[index]->why;
    EXPECT_GT(*rule[index]->multiplier, 1.0) << "lerope's A is smaller";
    ExpectRelativelyNear(row[1], *rule[index]->multiplier, "CM");
    ExpectRelativelyNear(row[2], rule[index]->interval->low, "band low");
    ExpectRelativelyNear(row[3], rule[index]->interval->high, "band high");
    EXPECT_EQ(row[4], rule[index]->extrapolated ? 1 : 0);
  }

  // Residuals: ln L - ln L_fitted per run.
  const std::vector<DataIndex> residuals = Indices(Read(dir / "law_residuals.dat"));
  ASSERT_EQ(residuals.size(), 2u);
  ASSERT_EQ(residuals[0].rows.size(), 21u);
  for (size_t index = 0; index < 21; ++index) {
    const fit::LawFittedRun& run = report.runs[index];
    ExpectRelativelyNear(residuals[0].rows[index][0], run.n, "n");
    EXPECT_NEAR(residuals[0].rows[index][4], std::log(run.loss / run.fitted), 1e-8);
  }

  // The rollout: measured, predicted and the interval of each held-out run.
  const std::vector<DataIndex> rollout = Indices(Read(dir / "law_rollout.dat"));
  size_t held_out = 0;
  for (const DataIndex& block : rollout) held_out += block.rows.size();
  EXPECT_EQ(held_out, report.rollout->points.size());
  const fit::RolloutPoint& first = report.rollout->points.front();
  ExpectRelativelyNear(rollout[0].rows[0][0], first.loss, "measured");
  ExpectRelativelyNear(rollout[0].rows[0][1], first.predicted, "predicted");
  fs::remove_all(dir);
}

TEST(LawPlot, MeasuredMultipliersAreDrawnOverThePredictedBand) {
  if (!GnuplotInstalled()) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = FreshDir("rung_law_plot_test_", "measured");
  LawPlotOptions options;
  options.out_dir = dir.string();
  options.measured = {{"lerope", 1e18, 1.08, 1.02, 1.15, "hermite"}, {"lerope", 1e19, 1.11, std::nullopt, std::nullopt, "hermite"}};
  ASSERT_TRUE(WriteLawFigures(IsoflopReport(), options).ok());
  const std::vector<DataIndex> measured = Indices(Read(dir / "law_multipliers_measured.dat"));
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_EQ(measured[0].name, "lerope");
  EXPECT_EQ(measured[0].rows, (std::vector<std::vector<double>>{{1e18, 1.08, 1.02, 1.15}, {1e19, 1.11, 1.11, 1.11}}));
  EXPECT_NE(Read(dir / "laws.gp").find("lerope measured (hermite)"), std::string::npos);
  fs::remove_all(dir);
}

// A grid of sizes x token counts without IsoFLOP profiles, baseline or rollout: the loss figures group
// the runs by D (against N) and by N (against D), and only they and the residuals are drawn.
TEST(LawPlot, AGridOfTokenCountsIsGroupedByDAndDrawsOnlyWhatTheReportHas) {
  if (!GnuplotInstalled()) GTEST_SKIP() << "gnuplot not installed";
  fit::LawRuns runs;
  runs.source = "grid";
  for (double n : {1e7, 3e7, 1e8, 3e8}) {
    for (double d : {1e9, 1e10, 1e11}) runs.runs.push_back({"rope", n, d, kHoffmann.Predict(n, d)});
  }
  fit::LawOptions law;
  law.bootstrap = 0;
  law.rollout = 0;
  law.isoflop = false;
  StatusOr<fit::LawReport> report = fit::FitLaws(runs, law);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const fs::path dir = FreshDir("rung_law_plot_test_", "tokens");
  LawPlotOptions options;
  options.out_dir = dir.string();
  StatusOr<std::vector<std::string>> files = WriteLawFigures(*report, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(FileNames(*files), (std::vector<std::string>{"law_loss_vs_n.svg", "law_loss_vs_n.png", "law_loss_vs_d.svg",
                                                         "law_loss_vs_d.png", "law_residuals.svg", "law_residuals.png"}));
  const std::vector<DataIndex> by_d = Indices(Read(dir / "law_loss_vs_n_points.dat"));
  ASSERT_EQ(by_d.size(), 3u);
  EXPECT_EQ(by_d[0].name, "rope | D = 10^{9} tokens");
  const std::vector<DataIndex> by_n = Indices(Read(dir / "law_loss_vs_d_points.dat"));
  ASSERT_EQ(by_n.size(), 4u);
  EXPECT_EQ(by_n[1].name, "rope | N = 3×10^{7}");
  EXPECT_FALSE(fs::exists(dir / "isoflop.svg"));
  fs::remove_all(dir);
}

TEST(LawPlot, AReportWithoutRunsIsInvalidArgument) {
  const fs::path dir = FreshDir("rung_law_plot_test_", "empty");
  LawPlotOptions options;
  options.out_dir = dir.string();
  StatusOr<std::vector<std::string>> files = WriteLawFigures(fit::LawReport(), options);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(files.status().message(), "the law report has no fitted run to draw");
  EXPECT_FALSE(fs::exists(dir)) << "nothing is created for a report with nothing to draw";
}

TEST(LawPlot, MeasuredMultipliersOfALadderAreItsHermiteRowsWithTheirIntervals) {
  fit::MultiplierReport report;
  report.baseline = "rope";
  fit::MultiplierRow baseline;
  baseline.variant = "rope";
  baseline.estimator = fit::Estimator::kHermite;
  baseline.multiplier = 1.0;
  fit::MultiplierRow piecewise;
  piecewise.variant = "lerope";
  piecewise.estimator = fit::Estimator::kPiecewise;
  piecewise.multiplier = 1.3;
  fit::MultiplierRow hermite = piecewise;
  hermite.estimator = fit::Estimator::kHermite;
  hermite.compute = 2e12;
  hermite.multiplier = 1.2;
  hermite.interval = fit::Interval{1.1, 1.35};
  fit::MultiplierRow undefined = hermite;
  undefined.multiplier.reset();
  report.rows = {baseline, piecewise, hermite, undefined};
  const std::vector<MeasuredMultiplier> points = MeasuredMultipliersOf(report);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].variant, "lerope");
  EXPECT_EQ(points[0].compute, 2e12);
  EXPECT_EQ(points[0].multiplier, 1.2);
  EXPECT_EQ(points[0].low, 1.1);
  EXPECT_EQ(points[0].high, 1.35);
  EXPECT_EQ(points[0].estimator, "hermite");
}

}  // namespace
}  // namespace rung::plot
