#include "sweeps/plot/gnuplot_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "sweeps/fit/chinchilla_law.h"
#include "sweeps/fit/ladder_csv.h"
#include "tests/sweeps/plot_test_files.h"

namespace rung::fit {
namespace {

namespace fs = std::filesystem;

bool HaveGnuplot() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

fs::path FreshPlotDir(const std::string& name) { return plot_testing::FreshDir("rung_plot_test_", name); }
using plot_testing::Read;

MultiplierReport ExampleReport() {
  StatusOr<LadderResults> ladder = ReadLadderCsv(RUNG_SOURCE_DIR "/sweeps/examples/ladder-example.csv");
  EXPECT_TRUE(ladder.ok()) << ladder.status().message();
  MultiplierOptions options;
  options.baseline = "rope";
  options.bootstrap = 50;
  options.e_sensitivity = false;
  return ComputeMultipliers(ladder.value(), options).value();
}

TEST(GnuplotPlot, WritesSvgAndPngOfTheExampleLadder) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed (deploy/install-deps.sh installs gnuplot-nox)";
  fs::path dir = FreshPlotDir("example");
  PlotOptions options;
  options.out_dir = dir.string();
  StatusOr<std::vector<std::string>> files = WritePlots(ExampleReport(), options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 4u);
  for (const std::string& file : files.value()) EXPECT_GT(fs::file_size(file), 1000u) << file;
  std::string png = Read(dir / "loss_vs_compute.png");
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::string svg = Read(dir / "loss_vs_compute.svg");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("lerope"), std::string::npos);                    // the key
  EXPECT_NE(svg.find("validation loss L (nats)"), std::string::npos);  // the axis
  EXPECT_NE(svg.find("×1.1"), std::string::npos);                      // a multiplier label
  EXPECT_TRUE(fs::exists(dir / "plots.gp"));
  EXPECT_TRUE(fs::exists(dir / "points.dat"));
  fs::remove_all(dir);
}

MultiplierReport ReportOf(const std::string& csv, int bootstrap = 0) {
  StatusOr<LadderResults> ladder = ParseLadderCsv(csv, "test.csv");
  EXPECT_TRUE(ladder.ok()) << ladder.status().message();
  MultiplierOptions options;
  options.baseline = "rope";
  options.bootstrap = bootstrap;
  options.e_sensitivity = false;
  StatusOr<MultiplierReport> report = ComputeMultipliers(ladder.value(), options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.value();
}

// Four example studies are one rung: loss_vs_compute shows each variant's loss (a dot plot labelled
// with it), and multipliers says in its place why there is none, never a gnuplot error or empty file.
TEST(GnuplotPlot, AOneRungLadderDrawsItsLossesAndSaysWhyThereIsNoMultiplier) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed";
  fs::path dir = FreshPlotDir("one_rung");
  PlotOptions options;
  options.out_dir = dir.string();
  StatusOr<std::vector<std::string>> files = WritePlots(ReportOf("variant,label,compute,loss,seed\n"
                                                                 "rope,L2-d64,1e12,2.4512,0\nrope,L2-d64,1e12,2.4530,1\n"
                                                                 "lerope,L2-d64,1.01e12,2.4377,0\n"
                                                                 "lerope,L2-d64,1.01e12,2.4391,1\n"
                                                                 "nope,L2-d64,1e12,2.6010,0\nnope,L2-d64,1e12,2.6022,1\n"),
                                                        options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 4u);
  for (const std::string& file : files.value()) EXPECT_GT(fs::file_size(file), 1000u) << file;
  EXPECT_EQ(Read(dir / "gnuplot.log").find("line "), std::string::npos);  // no gnuplot warning on a line
  const std::string multipliers = Read(dir / "multipliers.svg");
  EXPECT_NE(multipliers.find("No compute multiplier to draw"), std::string::npos);
  EXPECT_NE(multipliers.find("two or more"), std::string::npos);
  const std::string points = Read(dir / "points.dat");
  EXPECT_NE(points.find("\"2.452\""), std::string::npos) << points;  // the baseline's loss labelled too
  EXPECT_EQ(points.find("undefined"), std::string::npos) << points;
  const std::string script = Read(dir / "plots.gp");
  EXPECT_EQ(script.find("title 'power-law fit"), std::string::npos) << "no fit is drawn, so the key names none";
  // Nothing varies along compute: the losses as a dot plot, best first, the baseline's as a line.
  const std::string variants = Read(dir / "variants.dat");
  EXPECT_LT(variants.find("lerope"), variants.find("rope (baseline)")) << variants;
  EXPECT_LT(variants.find("rope (baseline)"), variants.find("nope")) << variants;
  EXPECT_NE(Read(dir / "loss_vs_compute.svg").find("Validation loss per variant at rung L2-d64"), std::string::npos);
  fs::remove_all(dir);
}

// CM 1.003 is labelled x1.003, not x1.00 (the decimals show how far a multiplier is from 1); a variant that coincides with the
// baseline has its own mark and dash and is drawn after it (over it).
TEST(GnuplotPlot, LabelsShowTheDigitWhereMultipliersDifferAndVariantsAreDrawnOverTheBaseline) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed";
  fs::path dir = FreshPlotDir("close");
  PlotOptions options;
  options.out_dir = dir.string();
  // rope: L = 2 at 1e12, 1.5 at 1e13. twin coincides with rope; close sits a hair below it.
  StatusOr<std::vector<std::string>> files = WritePlots(ReportOf("variant,label,compute,loss\n"
                                                                 "rope,a,1e12,2.0\nrope,b,1e13,1.5\nrope,c,1e14,1.2\n"
                                                                 "twin,a,1e12,2.0\ntwin,b,1e13,1.5\ntwin,c,1e14,1.2\n"
                                                                 "close,a,1e12,1.9994\nclose,b,1e13,1.4995\n"
                                                                 "close,c,1e14,1.1997\n"),
                                                        options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  const std::string points = Read(dir / "points.dat");
  EXPECT_NE(points.find("\"×1.00\""), std::string::npos) << points;    // twin
  EXPECT_NE(points.find("\"×1.003\""), std::string::npos) << points;   // close at a: 1.9994 vs 2
  EXPECT_NE(points.find("\"×1.004\""), std::string::npos) << points;   // close at b: 1.4995 vs 1.5
  const std::string script = Read(dir / "plots.gp");
  const size_t baseline = script.find("title 'rope (baseline)'");
  const size_t twin = script.find("title 'twin'");
  ASSERT_NE(baseline, std::string::npos) << script;
  ASSERT_NE(twin, std::string::npos) << script;
  EXPECT_LT(baseline, twin) << "the baseline is drawn first";
  const std::string twin_line = script.substr(script.rfind('\n', twin), twin - script.rfind('\n', twin));
  EXPECT_EQ(twin_line.find(" pt 7 "), std::string::npos) << twin_line;  // not the baseline's disc
  EXPECT_NE(script.find("nohead back"), std::string::npos) << "CM = 1 drawn behind the variants";
  fs::remove_all(dir);
}

TEST(GnuplotPlot, AMissingGnuplotIsFailedPrecondition) {
  fs::path dir = FreshPlotDir("missing");
  PlotOptions options;
  options.out_dir = dir.string();
  options.gnuplot = "/nonexistent/gnuplot";
  StatusOr<std::vector<std::string>> files = WritePlots(ExampleReport(), options);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(files.status().message().find("gnuplot-nox"), std::string::npos) << files.status().message();
  fs::remove_all(dir);
}

TEST(GnuplotPlot, GnuplotsErrorsComeBackInTheStatus) {
  fs::path dir = FreshPlotDir("failing");
  fs::create_directories(dir);
  fs::path fake = dir / "fake-gnuplot";
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\necho '\"plots.gp\" line 12: undefined variable: boom' >&2\nexit 1\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  PlotOptions options;
  options.out_dir = (dir / "out").string();
  options.gnuplot = fake.string();
  StatusOr<std::vector<std::string>> files = WritePlots(ExampleReport(), options);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), StatusCode::kInternal);
  EXPECT_NE(files.status().message().find("undefined variable: boom"), std::string::npos) << files.status().message();
  fs::remove_all(dir);
}

// A ladder whose runs have N and D (each size at D / N = 20 and 60, so that the law can tell N from D):
// the multiplier figure draws what `rung fit` predicts from the fitted L(N, D) beside the measured
// multipliers, each prediction's interval as a band, and reaches to the largest predicted compute.
TEST(GnuplotPlot, ALadderWithNAndDDrawsThePredictedMultipliersAsBands) {
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const ChinchillaLaw rope{1.69, 406.4, 410.7, 0.34, 0.28}, lerope{1.69, 360.0, 410.7, 0.34, 0.28};
  std::mt19937_64 generator(5);
  std::normal_distribution<double> noise(0.0, 0.002);
  std::ostringstream csv;
  csv << "variant,label,compute,loss,n,d\n";
  for (const auto& [name, law] : {std::make_pair("rope", rope), std::make_pair("lerope", lerope)}) {
    for (int rung = 0; rung < 8; ++rung) {
      const double n = 1e7 * std::pow(2.0, rung / 2), d = n * (rung % 2 ? 60 : 20);
      csv << name << ",r" << rung << "," << 6 * n * d << "," << law.Predict(n, d) * std::exp(noise(generator)) << ","
          << n << "," << d << "\n";
    }
  }
  StatusOr<LadderResults> ladder = ParseLadderCsv(csv.str(), "grid.csv");
  ASSERT_TRUE(ladder.ok()) << ladder.status().message();
  MultiplierOptions multiplier_options;
  multiplier_options.baseline = "rope";
  multiplier_options.bootstrap = 40;
  multiplier_options.e_sensitivity = false;
  multiplier_options.predict = true;
  StatusOr<MultiplierReport> report = ComputeMultipliers(*ladder, multiplier_options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_FALSE(report->predicted.empty()) << report->predicted_why;
  fs::path dir = FreshPlotDir("predicted");
  PlotOptions options;
  options.out_dir = dir.string();
  StatusOr<std::vector<std::string>> files = WritePlots(*report, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(Read(dir / "gnuplot.log"), "");
  // predicted.dat: per variant (baseline first) an index for rule, then optimal; lerope's rule rows are
  // the report's, with their intervals.
  const std::string predicted = Read(dir / "predicted.dat");
  std::istringstream lines(predicted.substr(predicted.find("# lerope | rule\n")));
  std::string line;
  std::getline(lines, line);
  std::vector<const PredictedMultiplier*> rule;
  for (const PredictedMultiplier& row : report->predicted) {
    if (row.variant == "lerope" && row.allocation == "rule") rule.push_back(&row);
  }
  ASSERT_FALSE(rule.empty());
  for (const PredictedMultiplier* row : rule) {
    ASSERT_TRUE(std::getline(lines, line));
    double compute = 0, cm = 0, low = 0, high = 0;
    std::istringstream(line) >> compute >> cm >> low >> high;
    EXPECT_NEAR(compute, row->compute, 1e-6 * row->compute);
    ASSERT_TRUE(row->multiplier && row->interval) << row->why;
    EXPECT_NEAR(cm, *row->multiplier, 1e-6);
    EXPECT_NEAR(low, row->interval->low, 1e-6);
    EXPECT_NEAR(high, row->interval->high, 1e-6);
  }
  const std::string script = Read(dir / "plots.gp");
  EXPECT_NE(script.find("'" + (dir / "predicted.dat").string() + "' index 2 using 1:3:4 with filledcurves"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("title 'lerope predicted, D = 20 N'"), std::string::npos) << script;
  EXPECT_NE(script.find("extrapolated: beyond the ladder"), std::string::npos) << script;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung::fit
