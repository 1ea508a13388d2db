#include "sweeps/plot/gnuplot_plot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sweeps/fit/ladder_csv.h"
#include "tests/sweeps/plot_test_files.h"

namespace rung::fit {
namespace {

namespace fs = std::filesystem;

bool HaveGnuplot() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

fs::path FreshDir(const std::string& name) { return plot_testing::FreshDir("rung_plot_test_", name); }
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
  fs::path dir = FreshDir("example");
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

TEST(GnuplotPlot, AMissingGnuplotIsFailedPrecondition) {
  fs::path dir = FreshDir("missing");
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
  fs::path dir = FreshDir("failing");
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

}  // namespace
}  // namespace rung::fit
