// tests/sweeps/plot/failure_modes_plot_test.cc
//
// The failure-mode figures (sweeps/plot/failure_modes_plot.h): one per mode, a line per source (and per
// precision where the mode depends on it), the Gaussian reference dashed, undefined statistics left out.
#include "sweeps/plot/failure_modes_plot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/sweeps/plot_test_files.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

FailureModeSummary Row(const std::string& source, int64_t length, const std::string& precision, double inversion,
                       double aliasing) {
  FailureModeSummary row;
  row.source = source;
  row.length = length;
  row.base = 10000;
  row.precision = precision;
  row.position_inversion = inversion;
  row.position_aliasing_fraction = aliasing;
  row.token_aliasing = precision == "bf16" ? 1.0 : 0.0;
  row.attention_invariance = precision == "bf16" ? static_cast<double>(length) / 8.0 : 0.0;
  return row;  // token_inversion, and the rest, undefined
}

TEST(FailureModesPlot, DrawsAFigureAModeWithALinePerSourceAndPrecision) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot not installed (deploy/install-deps.sh installs gnuplot-nox)";
  }
  const fs::path dir = plot_testing::FreshDir("rung_failure_modes_plot_test_", "modes");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 3";
  const std::vector<FailureModeSummary> rows = {
      Row("trial 3", 16, "fp32", 0.25, 0.0), Row("trial 3", 16, "bf16", 0.25, 0.125),
      Row("trial 3", 32, "fp32", 0.5, 0.0),  Row("trial 3", 32, "bf16", 0.5, 0.25),
      Row("Gaussian", 16, "fp32", 0.48, 0.0), Row("Gaussian", 32, "fp32", 0.41, 0.0)};
  StatusOr<std::vector<std::string>> files = WriteFailureModePlots(rows, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->size(), 8u)
      << "position inversion, position aliasing, token aliasing and attention invariance; no token inversion";
  EXPECT_FALSE(fs::exists(dir / "token_inversion.svg"));
  const std::string invariance = plot_testing::Read(dir / "attention_invariance.dat");
  EXPECT_NE(invariance.find("# trial 3 10000 bf16\n16 2\n32 4\n"), std::string::npos) << invariance;
  EXPECT_EQ(plot_testing::Read(dir / "position_inversion.dat"),
            "# Gaussian 10000 \n16 0.48\n32 0.41\n\n\n# trial 3 10000 \n16 0.25\n32 0.5\n\n\n")
      << "one line per source from the fp32 rows, M ascending";
  const std::string aliasing = plot_testing::Read(dir / "position_aliasing.dat");
  EXPECT_NE(aliasing.find("# trial 3 10000 bf16\n16 0.125\n32 0.25\n"), std::string::npos) << aliasing;
  const std::string script = plot_testing::Read(dir / "failure_modes.gp");
  EXPECT_NE(script.find("dt 2 title 'Gaussian'"), std::string::npos) << "the reference is dashed";
  fs::remove_all(dir);
}

TEST(FailureModesPlot, AModeWhoseValuesAreAllZeroIsDrawnOnALinearAxis) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot not installed (deploy/install-deps.sh installs gnuplot-nox)";
  }
  const fs::path dir = plot_testing::FreshDir("rung_failure_modes_plot_test_", "zeros");
  DiagnosticsPlotOptions options;
  options.out_dir = dir.string();
  options.title = "trial 1";
  // Token aliasing (a log axis where it can be) is 0 at every length and precision, as a trained
  // model's can be; gnuplot refuses a log axis with nothing positive on it.
  std::vector<FailureModeSummary> rows = {Row("trial 1", 16, "fp32", 0.25, 0.0), Row("trial 1", 32, "fp32", 0.5, 0.0),
                                          Row("trial 1", 16, "bf16", 0.25, 0.1), Row("trial 1", 32, "bf16", 0.5, 0.2)};
  for (FailureModeSummary& row : rows) row.token_aliasing = 0.0;
  StatusOr<std::vector<std::string>> files = WriteFailureModePlots(rows, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_TRUE(fs::exists(dir / "token_aliasing.svg"));
  const std::string script = plot_testing::Read(dir / "failure_modes.gp");
  const size_t plot = script.find("token_aliasing.dat");
  ASSERT_NE(plot, std::string::npos) << script;
  const size_t block = script.rfind("reset\n", plot);  // the token-aliasing figure's settings
  ASSERT_NE(block, std::string::npos) << script;
  EXPECT_EQ(script.substr(block, plot - block).find("set logscale y"), std::string::npos)
      << "a linear axis for all-zero values";
  fs::remove_all(dir);
}

TEST(FailureModesPlot, NoRowsOrNoStatisticIsInvalidArgument) {
  DiagnosticsPlotOptions options;
  options.out_dir = plot_testing::FreshDir("rung_failure_modes_plot_test_", "none").string();
  EXPECT_EQ(WriteFailureModePlots({}, options).status().code(), StatusCode::kInvalidArgument);
  FailureModeSummary undefined;
  undefined.source = "trial 1";
  undefined.precision = "fp32";
  EXPECT_EQ(WriteFailureModePlots({undefined}, options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rung::plot
