#include "sweeps/plot/extrapolation_plot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/sweeps/plot_test_files.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

records::ExtrapolationResult Evaluation(int64_t multiple, const std::string& method, double loss, int64_t train_length,
                                        bool per_position) {
  records::ExtrapolationResult entry;
  entry.multiple = multiple;
  entry.length = multiple * train_length;
  entry.method = method;
  entry.val_loss = loss;
  if (per_position) {
    for (int64_t position = 0; position < entry.length; ++position) {
      entry.val_loss_per_position.push_back(loss + 0.001 * static_cast<double>(position));
    }
  }
  return entry;
}

// A YaRN c sweep of one checkpoint (T = 64): three trials that differ only in c, each evaluated at 2x
// and 4x with none and yarn.
std::vector<EvaluatedTrial> YarnSweep() {
  std::vector<EvaluatedTrial> trials;
  for (const auto& [c, offset] : std::vector<std::pair<std::string, double>>{{"0.07", 0.0}, {"0.1", 0.1}, {"0.2", 0.2}}) {
    EvaluatedTrial trial;
    trial.axes = {{"position.variant", "rope"}, {"train.extrapolation_methods", "[\"none\",\"yarn\"]"},
                  {"train.extrapolation_yarn_c", c}};
    trial.val_loss = 2.0;
    for (int64_t multiple : {2, 4}) {
      trial.results.push_back(Evaluation(multiple, "none", 3.0 + multiple, 64, true));
      trial.results.push_back(Evaluation(multiple, "yarn", 2.0 + 0.1 * multiple + offset, 64, true));
    }
    trials.push_back(trial);
  }
  return trials;
}

// Options that write into a fresh temporary folder named `name`.
ExtrapolationPlotOptions FreshOptions(const std::string& name, const std::string& title) {
  ExtrapolationPlotOptions options;
  options.out_dir = plot_testing::FreshDir("rung_extrapolation_test_", name).string();
  options.title = title;
  return options;
}

// The lines of one block ("# title" then rows) of a gnuplot data file, by its title.
std::vector<std::string> Block(const std::string& data, const std::string& title) {
  std::vector<std::string> rows;
  std::istringstream lines(data);
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) == 0) {
      if (inside) break;
      inside = line == "# " + title;
      continue;
    }
    if (inside && !line.empty()) rows.push_back(line);
  }
  return rows;
}

TEST(ExtrapolationPlot, LabelsSayOnlyWhatDiffersBetweenTheTrialsOfAGroup) {
  const std::vector<EvaluatedTrial> trials = YarnSweep();
  EXPECT_EQ(EvaluatedTrialLabels(trials),
            (std::vector<std::string>{"extrapolation_yarn_c 0.07", "extrapolation_yarn_c 0.1", "extrapolation_yarn_c 0.2"}))
      << "the variant is the same for all and the methods are each line's own";
  std::vector<EvaluatedTrial> ladder(2);
  ladder[0].axes = {{"position.variant", "rope"}, {"seed", "0"}};
  ladder[1].axes = {{"position.variant", "{\"variant\":\"adarope\",\"adarope\":{\"fixed_log\":true}}"}, {"seed", "0"}};
  EXPECT_EQ(EvaluatedTrialLabels(ladder), (std::vector<std::string>{"rope", "adarope fixed_log=true"}));
  ladder[1].group = "L2-d32";
  EXPECT_EQ(EvaluatedTrialLabels(ladder), (std::vector<std::string>{"", ""})) << "each alone in its group";
}

// The YaRN c sweep: one line per c x method from the training length (the trials' val_loss) through 2x
// and 4x on a log2 axis with a tic at each length, T marked; and each line's 4x per-position losses
// averaged into 64 buckets of 4 positions.
TEST(ExtrapolationPlot, AYarnSweepDrawsALinePerValueAndMethodAndThePositionsInBuckets) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const ExtrapolationPlotOptions options = FreshOptions("yarn", "yarn_c");
  const fs::path dir = options.out_dir;
  StatusOr<std::vector<std::string>> files = WriteExtrapolationPlots(YarnSweep(), options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  const std::vector<std::string> names = plot_testing::FileNames(*files);
  EXPECT_EQ(names, (std::vector<std::string>{"loss_vs_length.svg", "loss_vs_length.png", "loss_by_position.svg",
                                            "loss_by_position.png"}));
  for (const std::string& name : names) EXPECT_GT(fs::file_size(dir / name), 1000u) << name;

  const std::string lengths = plot_testing::Read(dir / "loss_vs_length.dat");
  EXPECT_EQ(Block(lengths, "extrapolation_yarn_c 0.1 (yarn)"), (std::vector<std::string>{"64 2", "128 2.3", "256 2.5"}))
      << lengths;
  EXPECT_EQ(Block(lengths, "extrapolation_yarn_c 0.07 (none)"), (std::vector<std::string>{"64 2", "128 5", "256 7"}));
  size_t blocks = 0;
  for (size_t at = lengths.find("# "); at != std::string::npos; at = lengths.find("# ", at + 1)) ++blocks;
  EXPECT_EQ(blocks, 6u) << "3 values of c x 2 methods";

  const std::string script = plot_testing::Read(dir / "extrapolation.gp");
  EXPECT_NE(script.find("set logscale x 2"), std::string::npos) << script;
  EXPECT_NE(script.find("set xtics ('64' 64, '128' 128, '256' 256)"), std::string::npos) << script;
  EXPECT_NE(script.find("set arrow from 64, graph 0 to 64, graph 1 nohead"), std::string::npos) << script;
  EXPECT_NE(script.find("'training length T = 64'"), std::string::npos) << script;
  EXPECT_NE(script.find("title 'extrapolation_yarn_c 0.2 (yarn)'"), std::string::npos) << script;
  EXPECT_NE(script.find("yarn\\\\_c: loss by position at 256 tokens"), std::string::npos) << script;
  // A colour per value of c, a dash per method: the two lines of c 0.07 share the colour.
  EXPECT_NE(script.find("index 0 using 1:2 with linespoints ps 1.2 lc rgb '#d95f02' lw 2 dt 1"), std::string::npos) << script;
  EXPECT_NE(script.find("index 1 using 1:2 with linespoints ps 1.2 lc rgb '#d95f02' lw 2 dt 2"), std::string::npos) << script;
  EXPECT_NE(script.find("index 2 using 1:2 with linespoints ps 1.2 lc rgb '#1b9e77' lw 2 dt 1"), std::string::npos) << script;

  const std::string positions = plot_testing::Read(dir / "loss_by_position.dat");
  const std::vector<std::string> yarn = Block(positions, "extrapolation_yarn_c 0.2 (yarn) at 256 tokens (4 position(s) a bucket)");
  ASSERT_EQ(yarn.size(), 64u) << positions;
  EXPECT_EQ(yarn.front(), "2.5 2.6015") << "positions 1..4: losses 2.6 + 0.001 x (0..3)";
  EXPECT_EQ(yarn.back(), "254.5 2.8535");
  const std::string log = plot_testing::Read(dir / "gnuplot.log");
  EXPECT_EQ(log.find("line "), std::string::npos) << "a gnuplot warning: " << log;
  fs::remove_all(dir);
}

// A ladder's trials: a pair of figures per rung, each trial labelled by what differs within its rung;
// one method, so a colour per trial; a method's own 1x evaluation is its point at T; a rung whose
// evaluations kept no per-position losses has no loss_by_position figure; trials without results are
// left out, and none at all is INVALID_ARGUMENT.
TEST(ExtrapolationPlot, ALadderHasAPairOfFiguresPerRungAndLeavesOutWhatItCannotDraw) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const ExtrapolationPlotOptions options = FreshOptions("ladder", "ladder");
  const fs::path dir = options.out_dir;
  std::vector<EvaluatedTrial> trials;
  for (const std::string rung : {"L1-d16", "L2-d32"}) {
    for (const std::string variant : {"rope", "lerope"}) {
      EvaluatedTrial trial;
      trial.group = rung;
      trial.axes = {{"position.variant", variant}, {"seed", "0"}};
      trial.val_loss = rung == "L1-d16" ? 3.0 : 2.5;
      trial.results = {Evaluation(1, "dominant_band", 2.75, 16, false), Evaluation(2, "dominant_band", 3.5, 16, rung == "L1-d16")};
      trials.push_back(trial);
    }
  }
  trials.push_back(EvaluatedTrial{"L2-d32", {{"position.variant", "nope"}, {"seed", "0"}}, 2.0, {}});
  StatusOr<std::vector<std::string>> files = WriteExtrapolationPlots(trials, options);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(plot_testing::FileNames(*files),
            (std::vector<std::string>{"loss_vs_length_L1-d16.svg", "loss_vs_length_L1-d16.png", "loss_by_position_L1-d16.svg",
                                      "loss_by_position_L1-d16.png", "loss_vs_length_L2-d32.svg", "loss_vs_length_L2-d32.png"}));
  const std::string lengths = plot_testing::Read(dir / "loss_vs_length_L2-d32.dat");
  EXPECT_EQ(Block(lengths, "lerope (dominant_band)"), (std::vector<std::string>{"16 2.75", "32 3.5"})) << lengths;
  EXPECT_EQ(lengths.find("nope"), std::string::npos) << "a trial without evaluations is not drawn";
  const std::string script = plot_testing::Read(dir / "extrapolation.gp");
  EXPECT_NE(script.find("ladder: rung L2-d32: loss against the evaluation length"), std::string::npos) << script;
  EXPECT_EQ(Block(plot_testing::Read(dir / "loss_by_position_L1-d16.dat"), "rope (dominant_band) at 32 tokens (1 position(s) a bucket)").size(), 32u);

  EXPECT_EQ(WriteExtrapolationPlots({trials.back()}, options).status().code(), StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung::plot
