// `rung fit` and `rung plot` as a user meets them: output, exit codes and messages.
#include "coordinator/cli/commands/fit_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/ladder_source.h"
#include "coordinator/cli/commands/plot_command.h"

namespace rung::cli {
namespace {

const char* kExample = RUNG_SOURCE_DIR "/sweeps/examples/ladder-example.csv";

struct Result {
  int code;
  std::string out, err;
};

Result Fit(FitCommandOptions options) {
  std::ostringstream out, err;
  int code = RunFitCommand(options, out, err);
  return {code, out.str(), err.str()};
}

FitCommandOptions Example() {
  FitCommandOptions options;
  options.csv_path = kExample;
  options.baseline = "rope";
  options.bootstrap = 100;
  return options;
}

TEST(FitCommand, PrintsTablesForTheExampleLadder) {
  Result result = Fit(Example());
  EXPECT_EQ(result.code, kOk) << result.err;
  EXPECT_NE(result.out.find("Piecewise in ln C (as published)"), std::string::npos);
  EXPECT_NE(result.out.find("lerope"), std::string::npos);
  EXPECT_NE(result.out.find("wall-clock CM"), std::string::npos);
  EXPECT_NE(result.out.find("paired CM"), std::string::npos);
  EXPECT_TRUE(result.err.empty()) << result.err;
}

TEST(FitCommand, JsonIsAListOfObjects) {
  FitCommandOptions options = Example();
  options.format = "json";
  Result result = Fit(options);
  ASSERT_EQ(result.code, kOk) << result.err;
  nlohmann::json rows = nlohmann::json::parse(result.out);
  ASSERT_TRUE(rows.is_array());
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0]["variant"], "rope");
  EXPECT_EQ(rows[0]["estimator"], "piecewise");
}

TEST(FitCommand, MoreBootstrapReplicatesThanTheLimitAreBadInputBeforeAnyFit) {
  FitCommandOptions options = Example();
  options.bootstrap = 100000000;
  Result result = Fit(options);
  EXPECT_EQ(result.code, kUsage);
  EXPECT_EQ(result.err,
            "rung fit: --bootstrap: 100000000 replicates are more than the fixed limit of 100000 "
            "(sweeps/fit/compute_multipliers.h)\n");
  EXPECT_TRUE(result.out.empty());
}

TEST(FitCommand, AMissingFileIsBadInputNamingIt) {
  FitCommandOptions options = Example();
  options.csv_path = "/nonexistent/ladder.csv";
  Result result = Fit(options);
  EXPECT_EQ(result.code, kUsage);
  EXPECT_NE(result.err.find("rung fit: cannot open /nonexistent/ladder.csv"), std::string::npos) << result.err;
}

TEST(FitCommand, ABadCsvIsBadInputNamingFileAndLine) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "rung_fit_command_bad.csv";
  {
    std::ofstream csv(path);
    csv << "variant,label,compute,loss\nrope,r1,1e10,3.5\nrope,r2,1e11,three\n";
  }
  FitCommandOptions options = Example();
  options.csv_path = path.string();
  Result result = Fit(options);
  EXPECT_EQ(result.code, kUsage);
  EXPECT_NE(result.err.find(path.string() + ":3: column 'loss': 'three' is not a number"), std::string::npos)
      << result.err;
  std::filesystem::remove(path);
}

TEST(FitCommand, UnknownBaselineBadFormatAndBadEGridAreBadInput) {
  FitCommandOptions options = Example();
  options.baseline = "alibi";
  Result unknown = Fit(options);
  EXPECT_EQ(unknown.code, kUsage);
  EXPECT_NE(unknown.err.find("baseline 'alibi' is not a variant"), std::string::npos) << unknown.err;

  options = Example();
  options.format = "yaml";
  EXPECT_EQ(Fit(options).code, kUsage);

  options = Example();
  options.e_grid = "0,half";
  Result grid = Fit(options);
  EXPECT_EQ(grid.code, kUsage);
  EXPECT_NE(grid.err.find("--e-grid: 'half' is not a number"), std::string::npos) << grid.err;

  options = Example();
  options.e_grid = "0,5";
  EXPECT_EQ(Fit(options).code, kUsage);  // above the baseline's smallest loss
}

TEST(FitCommand, RegistersASubcommandThatSetsTheExitCode) {
  CLI::App app{"rung"};
  int exit_code = -1;
  AddFitCommand(app, &exit_code);
  AddPlotCommand(app, &exit_code);
  CLI::App* fit = app.get_subcommand("fit");
  EXPECT_NE(fit->help().find("--from-csv"), std::string::npos);
  EXPECT_NE(fit->help().find("--e-grid"), std::string::npos);
  EXPECT_NE(app.get_subcommand("plot")->help().find("--out"), std::string::npos);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  app.parse(std::string("fit --from-csv /nonexistent.csv --baseline rope"), false);
  testing::internal::GetCapturedStdout();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(exit_code, kUsage);
  EXPECT_NE(err.find("/nonexistent.csv"), std::string::npos) << err;
}

TEST(PlotCommand, WritesTheFiguresOrSaysWhyNot) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "rung_plot_command_test";
  std::filesystem::remove_all(dir);
  PlotCommandOptions options;
  options.csv_path = kExample;
  options.baseline = "rope";
  options.out_dir = dir.string();
  std::ostringstream out, err;
  if (std::system("gnuplot --version > /dev/null 2>&1") == 0) {
    EXPECT_EQ(RunPlotCommand(options, out, err), kOk) << err.str();
    EXPECT_NE(out.str().find("loss_vs_compute.png"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(dir / "multipliers.svg"));
  }
  options.gnuplot = "/nonexistent/gnuplot";
  std::ostringstream out2, err2;
  EXPECT_EQ(RunPlotCommand(options, out2, err2), kFailure);
  EXPECT_NE(err2.str().find("rung plot: cannot run /nonexistent/gnuplot"), std::string::npos) << err2.str();
  options.baseline = "alibi";
  std::ostringstream out3, err3;
  EXPECT_EQ(RunPlotCommand(options, out3, err3), kUsage);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rung::cli

namespace rung::cli {
namespace {

// A sweep whose variants are named by several axes (inverse-temperature.yaml): the spec's baseline
// selector names one of them, not its position.variant alone.
TEST(BaselineVariant, MatchesEveryEntryOfTheSelectorInAVariantOfSeveralAxes) {
  const std::vector<std::string> variants = {"inverse_temperature.xi=1.0,position.variant=rope",
                                             "inverse_temperature.xi=0.0,position.variant=rope",
                                             "inverse_temperature.xi=0.0,position.variant=lerope"};
  EXPECT_EQ(BaselineVariant({{"position.variant", "rope"}, {"inverse_temperature.xi", 0.0}}, variants),
            "inverse_temperature.xi=0.0,position.variant=rope");
  EXPECT_EQ(BaselineVariant({{"position.variant", "rope"}}, {"rope", "lerope"}), "rope");
  EXPECT_EQ(BaselineVariant(nlohmann::json::object(), {"rope"}), "");
}

// A sweep whose variants are the values of an object axis (adarope-ablations.yaml's `position:`): the
// selector's position.variant names the plain variant, not an ablation that shares it.
TEST(BaselineVariant, MatchesTheValueOfAnObjectAxisWithTheFewestEntries) {
  const std::vector<std::string> variants = {R"({"adarope":{"fixed_log":true},"variant":"adarope"})",
                                             R"({"adarope":{"adascale":false},"variant":"rope"})",
                                             R"({"variant":"rope"})", R"({"variant":"adarope"})"};
  EXPECT_EQ(BaselineVariant({{"position.variant", "rope"}}, variants), R"({"variant":"rope"})");
  EXPECT_EQ(BaselineVariant({{"position.variant", "adarope"}, {"position.adarope.fixed_log", true}}, variants),
            R"({"adarope":{"fixed_log":true},"variant":"adarope"})");
}

}  // namespace
}  // namespace rung::cli
