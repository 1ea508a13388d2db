#include "sweeps/plot/gnuplot_script.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/sweeps/plot_test_files.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

bool HaveGnuplot() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

TEST(AxesLabel, ALabelStandsForEveryOtherAxisButTheSeed) {
  EXPECT_EQ(AxesLabel({{"position.variant", "lerope"}, {"train.extrapolation_yarn_c", "0.07"}}),
            "lerope extrapolation_yarn_c 0.07");
  EXPECT_EQ(AxesLabel({{"label", "YaRN s=3"}, {"train.init.adarope_scale", "3"}, {"seed", "0"}}), "YaRN s=3 seed 0");
  EXPECT_EQ(AxesLabel({{"label", ""}, {"position.variant", "rope"}}), "rope");
}

TEST(ReadableVariant, NamesTheVariantFirstThenItsOtherEntriesByTheirLastKeyPart) {
  EXPECT_EQ(ReadableVariant("inverse_temperature.xi=1.0,position.variant=rope"), "rope xi=1.0");
  EXPECT_EQ(ReadableVariant(R"({"adarope":{"fixed_log":true},"variant":"adarope"})"), "adarope fixed_log=true");
  EXPECT_EQ(ReadableVariant(R"({"variant":"rope"})"), "rope");
  EXPECT_EQ(ReadableVariant("lerope"), "lerope");
  EXPECT_EQ(ReadableVariant("position.variant=rope,train.init.from_trial=,train.init.parameters=all"), "rope parameters=all");
  EXPECT_EQ(ReadableVariant("{not json"), "{not json");
}

TEST(DecimalsToDistinguish, ShowsTheDigitWhereValuesDiffer) {
  EXPECT_EQ(DecimalsToDistinguish({1.0, 1.003}, 2, 4), 3);       // not x1.00 beside x1.00
  EXPECT_EQ(DecimalsToDistinguish({1.0, 1.25, 0.8}, 2, 4), 2);   // two decimals are enough
  EXPECT_EQ(DecimalsToDistinguish({1.0, 1.00002}, 2, 4), 4);     // at most max
  EXPECT_EQ(DecimalsToDistinguish({1.0, 1.0, 1.0}, 2, 4), 2);    // equal values need nothing
  EXPECT_EQ(DecimalsToDistinguish({1.0, std::nan(""), 1.0004}, 2, 5), 4);
}

// Tic labels and positions of a `set <axis>tics (...)` line.
int CountTics(const std::string& lines) { return static_cast<int>(std::count(lines.begin(), lines.end(), ',')) + 1; }

TEST(LogAxis, DecadesOverWideRangesAndSeveralLabelledTicsOverNarrowOnes) {
  const std::string wide = LogAxis("x", 1e10, 1e14);
  EXPECT_NE(wide.find("set logscale x\n"), std::string::npos);
  EXPECT_NE(wide.find("set format x '10^{%L}'"), std::string::npos) << wide;
  EXPECT_EQ(wide.find("set xtics ("), std::string::npos) << wide;

  // Within one decade (a one-rung sweep's curves, a ladder of close rungs): 1, 2, 5 x 10^k or finer.
  const std::string narrow = LogAxis("x", 6e11, 2.5e12);
  ASSERT_NE(narrow.find("set xtics ("), std::string::npos) << narrow;
  const std::string tics = narrow.substr(narrow.find("set xtics ("));
  EXPECT_GE(CountTics(tics), 3) << narrow;
  EXPECT_NE(tics.find("\"10^{12}\" 1.000000e+12"), std::string::npos) << narrow;
  EXPECT_NE(tics.find("\"2×10^{12}\" 2.000000e+12"), std::string::npos) << narrow;

  // Narrower than 1..9 x 10^k: evenly spaced round values, labelled m×10^k.
  const std::string tiny = LogAxis("y", 1.01, 1.05);
  ASSERT_NE(tiny.find("set ytics ("), std::string::npos) << tiny;
  EXPECT_GE(CountTics(tiny.substr(tiny.find("set ytics ("))), 3) << tiny;
  EXPECT_LE(CountTics(tiny.substr(tiny.find("set ytics ("))), 7) << tiny;
  const std::string curves = LogAxis("x", 1.812e11, 3.225e11);  // one rung's curve from first evaluation to end
  EXPECT_NE(curves.find("\"2.5×10^{11}\" 2.5"), std::string::npos) << curves;
  EXPECT_GE(CountTics(curves.substr(curves.find("set xtics ("))), 3) << curves;
  EXPECT_NE(tiny.find("set yrange [1.010000e+00:1.050000e+00]"), std::string::npos) << tiny;
}

TEST(MessageFigure, SaysWhyThereIsNothingToDraw) {
  const std::string script = MessageFigure("multipliers: nothing to draw", "one rung_label L1: no fit");
  EXPECT_NE(script.find("unset border"), std::string::npos);
  EXPECT_NE(script.find("\"one rung_label L1: no fit\" at graph 0.5, graph 0.5 center noenhanced"), std::string::npos)
      << script;
  if (!HaveGnuplot()) GTEST_SKIP() << "gnuplot not installed";
  const fs::path dir = plot_testing::FreshDir("rung_script_test_", "message");
  ASSERT_TRUE(MakeOutputFolder(dir.string()).ok());
  StatusOr<std::vector<std::string>> files =
      RenderGnuplot("gnuplot", dir.string(), "message.gp",
                    script + SvgAndPngOutputs((dir / "message").string(), 800, 600), {"message.svg", "message.png"});
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_NE(plot_testing::Read(dir / "message.svg").find("one rung_label L1: no fit"), std::string::npos);
  EXPECT_EQ(plot_testing::Read(dir / "gnuplot.log").find("line "), std::string::npos);  // no warning on a line
  fs::remove_all(dir);
}

// A gnuplot that writes an empty figure and fails: nothing is left in the folder but the script, the
// data and the log; a figure drawn before stays as it was.
TEST(RenderGnuplot, AFailedRunLeavesNoEmptyOrHalfWrittenFigure) {
  const fs::path dir = plot_testing::FreshDir("rung_script_test_", "failing");
  fs::create_directories(dir);
  const fs::path fake = dir / "fake-gnuplot";
  {
    std::ofstream script(fake);
    // Writes each `set output` target empty, as gnuplot does before it fails on the plot command.
    script << "#!/bin/sh\nsed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$1\" | while read f; do : > \"$f\"; done\n"
           << "echo 'plots.gp line 9: all points y value undefined!' >&2\nexit 1\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  { std::ofstream(dir / "old.svg") << "<svg>previous</svg>"; }
  const std::string script = "plot x\n" + SvgAndPngOutputs((dir / "new").string(), 800, 600) +
                             SvgAndPngOutputs((dir / "old").string(), 800, 600);
  StatusOr<std::vector<std::string>> files =
      RenderGnuplot(fake.string(), dir.string(), "x.gp", script, {"new.svg", "new.png", "old.svg", "old.png"});
  ASSERT_FALSE(files.ok());
  EXPECT_NE(files.status().message().find("all points y value undefined"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "new.svg"));
  EXPECT_FALSE(fs::exists(dir / "new.png"));
  EXPECT_EQ(plot_testing::Read(dir / "old.svg"), "<svg>previous</svg>");
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_NE(entry.path().filename().string().rfind(".staging", 0), 0u) << entry.path();  // cleaned up
  }
  EXPECT_NE(plot_testing::Read(dir / "x.gp").find("set output '" + (dir / "new.svg").string() + "'"),
            std::string::npos);  // the script to redraw by hand names the real paths
  EXPECT_NE(plot_testing::Read(dir / "gnuplot.log").find("all points y value undefined"), std::string::npos);
  fs::remove_all(dir);
}

// gnuplot's log is an output like the figures: a link named gnuplot.log is written through to its
// target (not truncated in place through the redirection, nor replaced by a file).
TEST(RenderGnuplot, TheLogIsPublishedThroughALinkLikeTheFigures) {
  const fs::path dir = plot_testing::FreshDir("rung_script_test_", "log-link");
  fs::create_directories(dir / "elsewhere");
  const fs::path fake = dir / "fake-gnuplot";
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\necho 'drawn, with a warning' >&2\nsed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$1\" | "
           << "while read f; do echo figure > \"$f\"; done\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  { std::ofstream(dir / "elsewhere" / "log.txt") << "an older log\n"; }
  fs::create_symlink("elsewhere/log.txt", dir / "gnuplot.log");
  StatusOr<std::vector<std::string>> files = RenderGnuplot(
      fake.string(), dir.string(), "x.gp", "plot x\n" + SvgAndPngOutputs((dir / "new").string(), 800, 600),
      {"new.svg", "new.png"});
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_TRUE(fs::is_symlink(dir / "gnuplot.log"));
  EXPECT_EQ(plot_testing::Read(dir / "elsewhere" / "log.txt"), "drawn, with a warning\n");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung::plot
