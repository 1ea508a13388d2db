#include "sweeps/plot/tuning_plot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/sweeps/plot_test_files.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;
using plot_testing::Read;

fs::path FreshTuningDir(const std::string& name) { return plot_testing::FreshDir("rung_tuning_plot_test_", name); }

std::vector<TuningCurve> Curves() {
  return {
      {"L1", "rope", {{0.004, 2.4}, {0.0055, 2.3}, {0.008, 2.35}}, 0.0055, true, 3e4},
      {"L1", "nope", {{0.004, 2.5}, {0.0055, 2.45}}, 0.0055, false, 3e4},
      {"L2", "rope", {{0.002, 2.0}, {0.0028, 1.9}, {0.004, 1.95}}, 0.0028, true, 8e4},
  };
}

TEST(TuningPlot, DrawsTheMetricAgainstTheValuePerRungAndTheBestValueAgainstN) {
  const fs::path dir = FreshTuningDir("figures");
  TuningPlotOptions options;
  options.out_dir = dir.string();
  options.title = "tuned";
  StatusOr<std::vector<std::string>> files = WriteTuningPlots(Curves(), {{"rope", 0.5, -0.34}}, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  for (const char* name : {"lr_sweep_L1.svg", "lr_sweep_L1.png", "lr_sweep_L2.svg", "best_lr.svg", "best_lr.png"}) {
    EXPECT_GT(fs::file_size(dir / name), 0u) << name;
  }
  const std::string script = Read(dir / "tuning.gp");
  EXPECT_NE(script.find("rope best (bracketed)"), std::string::npos);
  EXPECT_NE(script.find("nope best (unbracketed)"), std::string::npos) << "an unbracketed best is marked so";
  EXPECT_NE(script.find("rope: 0.5 N^-0.340"), std::string::npos) << "the law is drawn with its figures";
  // The chosen point of each line is its own data block.
  EXPECT_NE(Read(dir / "lr_sweep_L1.dat").find("# rope chosen\n5.500000e-03 2.3"), std::string::npos);
}

TEST(TuningPlot, ASearchWithNoScoredValueDrawsNothing) {
  TuningPlotOptions options;
  options.out_dir = FreshTuningDir("empty").string();
  StatusOr<std::vector<std::string>> files = WriteTuningPlots({{"L1", "rope", {}, std::nullopt, false, 1e4}}, {}, options);
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rung::plot
