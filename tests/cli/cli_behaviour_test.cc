// tests/cli/cli_behaviour_test.cc
//
// What the goldens cannot show of the `rung` command line: --watch on a terminal and off one
// (terminal control codes only for a terminal), the modes of the files it writes (the user's umask,
// nothing forced), `rung run`'s closing table after its spec grew, and the golden file format itself
// (parsed and written back unchanged, so that update mode rewrites only what changed).
#include <pty.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/subprocess.h"
#include "tests/cli/cli_process.h"
#include "tests/cli/golden_file.h"
#include "tests/cli/golden_fixture.h"

namespace rung::cli::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class CliBehaviourTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<GoldenCoordinator>> started = GoldenCoordinator::Start();
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    coordinator_ = std::move(started).value();
  }

  std::vector<std::string> Environment() const {
    std::vector<std::string> environment = EnvironmentWithout({"RUNG_"});
    environment.push_back("RUNG_COORDINATOR=" + coordinator_->address());
    environment.push_back("RUNG_TOKEN_FILE=" + coordinator_->user_token_file());
    return environment;
  }

  CommandResult Rung(std::vector<std::string> args) const {
    args.insert(args.begin(), RUNG_CLI_BINARY);
    return RunProcess(args, Environment(), "", RUNG_SOURCE_DIR);
  }

  // Runs rung with its stdout on a pseudo-terminal; returns what it wrote there.
  std::string RungOnTerminal(std::vector<std::string> args, int* exit_code) const {
    int master = -1, slave = -1;
    char slave_name[256] = {};
    if (openpty(&master, &slave, slave_name, nullptr, nullptr) != 0) {
      ADD_FAILURE() << "openpty failed";
      return "";
    }
    SubprocessOptions options;
    options.argv = std::move(args);
    options.argv.insert(options.argv.begin(), RUNG_CLI_BINARY);
    options.clear_environment = true;
    options.environment = Environment();
    options.stdin_from = Redirect::Null();
    options.stdout_to = Redirect::AppendTo(slave_name);  // the terminal, opened again by its name
    options.stderr_to = Redirect::Null();
    StatusOr<std::unique_ptr<Subprocess>> rung = Subprocess::Start(options);
    close(slave);  // the child holds the terminal now: the reads below end when it lets go
    if (!rung.ok()) {
      close(master);
      ADD_FAILURE() << rung.status().ToString();
      return "";
    }
    std::string text;
    char buffer[4096];
    ssize_t got;
    while ((got = read(master, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(got));
    close(master);
    StatusOr<ExitStatus> exit = (*rung)->Wait(std::chrono::seconds(60));
    *exit_code = exit.ok() && exit->signal == 0 ? exit->code : -1;
    return text;
  }

  std::unique_ptr<GoldenCoordinator> coordinator_;
};

TEST_F(CliBehaviourTest, WatchWritesNoTerminalControlCodesWhenStdoutIsNotATerminal) {
  ASSERT_EQ(Rung({"cancel", "2"}).exit_code, 0);
  const CommandResult watched = Rung({"status", "2", "--watch", "0.1"});
  EXPECT_EQ(watched.exit_code, 1) << "a cancelled sweep did not succeed: " << watched.err;
  EXPECT_THAT(watched.out, HasSubstr("sweep 2 golden-second: CANCELLED"));
  EXPECT_THAT(watched.out, Not(HasSubstr("\033")));
}

TEST_F(CliBehaviourTest, WatchRedrawsInPlaceOnATerminal) {
  ASSERT_EQ(Rung({"cancel", "2"}).exit_code, 0);
  int exit_code = -1;
  const std::string shown = RungOnTerminal({"status", "2", "--watch", "0.1"}, &exit_code);
  EXPECT_EQ(exit_code, 1);
  EXPECT_THAT(shown, HasSubstr("\033[2J\033[H"));
  EXPECT_THAT(shown, HasSubstr("golden-second: CANCELLED"));
}

TEST_F(CliBehaviourTest, WatchWithoutAValueRefreshesEveryTwoSeconds) {
  ASSERT_EQ(Rung({"cancel", "2"}).exit_code, 0);
  const CommandResult watched = Rung({"status", "2", "--watch"});
  EXPECT_EQ(watched.exit_code, 1) << watched.err;  // watching: a sweep that did not succeed is exit 1
  EXPECT_THAT(watched.out, HasSubstr("CANCELLED"));
}

// The mode of `path`'s permission bits.
mode_t ModeOf(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return 0;
  return info.st_mode & 0777;
}

TEST_F(CliBehaviourTest, ExportOutGetsTheModeTheUmaskGives) {
  for (mode_t mask : {mode_t{022}, mode_t{027}, mode_t{0}}) {
    SCOPED_TRACE("umask " + std::to_string(mask));
    const std::string out = coordinator_->scratch() + "/export-" + std::to_string(mask) + ".csv";
    const mode_t old = umask(mask);  // inherited by the child
    const CommandResult exported = Rung({"export", "1", "--out", out});
    umask(old);
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_EQ(ModeOf(out), 0666 & ~mask);
  }
}

TEST_F(CliBehaviourTest, PlotFilesGetTheModeTheUmaskGives) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot";
  const std::string out = coordinator_->scratch() + "/figures";
  const mode_t old = umask(027);
  const CommandResult plotted =
      Rung({"plot", "--from-csv", "sweeps/examples/ladder-example.csv", "--baseline", "rope", "--out", out});
  umask(old);
  ASSERT_EQ(plotted.exit_code, 0) << plotted.err;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (!entry.is_regular_file()) continue;
    ++files;
    EXPECT_EQ(ModeOf(entry.path().string()), mode_t{0640}) << entry.path();
  }
  EXPECT_GT(files, 4);
}

TEST_F(CliBehaviourTest, PlotDrawsThePowerLawsOfTheFitAskedFor) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot";
  std::map<std::string, std::string> data;  // residuals -> the fitted curves' data
  for (const std::string residuals : {"ln", "nats"}) {
    const std::string out = coordinator_->scratch() + "/figures-" + residuals;
    const CommandResult plotted = Rung({"plot", "--from-csv", "tests/data/lerope-table1.csv", "--baseline", "rope",
                                        "--out", out, "--power-law-residuals", residuals});
    ASSERT_EQ(plotted.exit_code, 0) << plotted.err;
    std::ifstream in(out + "/curves.dat");  // the fitted curves loss_vs_compute draws
    data[residuals] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_FALSE(data["ln"].empty());
  EXPECT_NE(data["ln"], data["nats"]) << "the shared-E fits differ, and so do the curves drawn";
  const CommandResult refused = Rung({"plot", "--from-csv", "tests/data/lerope-table1.csv", "--baseline", "rope",
                                      "--out", coordinator_->scratch() + "/figures-bad", "--power-law-residuals",
                                      "huber"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("rung plot: --power-law-residuals: unknown power-law residuals 'huber'"));
}

TEST(GoldenFormatTest, AFileIsWrittenBackAsItWasRead) {
  const std::string text =
      "# header\n"
      "\n"
      "=== a case\n"
      "# its comment\n"
      "rung sweeps --format 'json'\n"
      "--- stdin\n"
      "line\n"
      "--- exit 0\n"
      "--- stdout\n"
      "a\n"
      "\n"
      "b\n"
      "--- stderr contains\n"
      "fragment\n"
      "\n"
      "=== output that ends with empty lines and no newline\n"
      "rung x\n"
      "--- exit 2\n"
      "--- stdout\n"
      "text\n"
      "\\ no newline at end\n"
      "--- stderr\n"
      "error\n"
      "\n"
      "--- end\n";
  StatusOr<GoldenFile> file = ParseGoldenFile(text, "t.test");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->cases.size(), 2u);
  const GoldenCase& first = file->cases[0];
  EXPECT_EQ(first.title, "a case");
  EXPECT_EQ(first.line, 3);
  EXPECT_EQ(first.command, "rung sweeps --format 'json'");
  EXPECT_EQ(first.stdin_text, "line\n");
  EXPECT_EQ(first.stdout_expected->text, "a\n\nb\n");
  EXPECT_TRUE(first.stderr_expected->contains);
  EXPECT_EQ(first.stderr_expected->text, "fragment\n");  // the separator is not part of it
  const GoldenCase& second = file->cases[1];
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_EQ(second.stdout_expected->text, "text");
  EXPECT_EQ(second.stderr_expected->text, "error\n\n");
  EXPECT_EQ(FormatGoldenFile(*file), text);
}

TEST(GoldenFormatTest, MistakesNameTheLine) {
  EXPECT_THAT(ParseGoldenFile("=== no exit\nrung x\n--- stdout\n", "t.test").status().message(),
              HasSubstr("t.test:1: case 'no exit' has no '--- exit N' section"));
  EXPECT_THAT(ParseGoldenFile("=== x\nrung x\n--- exit 0\n--- stdot\n", "t.test").status().message(),
              HasSubstr("t.test:4: unknown section '--- stdot'"));
  EXPECT_THAT(ParseGoldenFile("=== x\nrung x\n--- exit 0\nstray\n", "t.test").status().message(),
              HasSubstr("t.test:3: '--- exit 0' takes no lines after it"));
  EXPECT_THAT(ParseGoldenFile("=== x\nrung x\nstray\n--- exit 0\n", "t.test").status().message(),
              HasSubstr("t.test:3: text outside any section: 'stray'"));
  EXPECT_THAT(ParseGoldenFile("=== x\n--- exit 0\n", "t.test").status().message(),
              HasSubstr("t.test:1: case 'x' has no command line"));
}

TEST(GoldenFormatTest, CommandsSplitLikeAShell) {
  StatusOr<std::vector<std::string>> words = SplitCommandLine(R"(rung results 1 --where 'a=b c' "x\"y" z\ w)");
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words, (std::vector<std::string>{"rung", "results", "1", "--where", "a=b c", "x\"y", "z w"}));
  EXPECT_FALSE(SplitCommandLine("rung 'open").ok());
}

TEST(GoldenFormatTest, ContainsChecksEachFragmentAndExactShowsADiff) {
  std::string why;
  EXPECT_TRUE(MeetsExpectation({true, "unknown sweep\n\nexit\n"}, "rung: unknown sweep 9; exit 2", &why));
  EXPECT_FALSE(MeetsExpectation({true, "missing\n"}, "something else", &why));
  EXPECT_THAT(why, HasSubstr("missing"));
  EXPECT_FALSE(MeetsExpectation({false, "a\nb\n"}, "a\nc\n", &why));
  EXPECT_THAT(why, HasSubstr("- b\n+ c\n"));
}

// The mean `rung run`'s closing table prints for `variant`, from its output ("rung variant runs mean ...").
std::string ClosingMean(const std::string& out, const std::string& variant) {
  std::istringstream lines(out.substr(out.find("\nresults (")));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string rung, name, runs, mean;
    if (fields >> rung >> name >> runs >> mean && name == variant) return runs + " " + mean;
  }
  return "(no row for " + variant + ")";
}

// `rung run` in a folder where its spec ran before, grown by a cell that expands first: the stored
// trials keep their indices, which are not the grown spec's, and the closing table still labels each
// trial by its own config (each variant here has its own learning rate, so its own loss).
TEST(RunCommand, TheClosingTableLabelsEachTrialByItsOwnConfigAfterTheSpecGrew) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("rung-run-grows-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string head = "name: grows\nmetric: {name: val_loss, goal: minimize}\ndata: {source: builtin, seq_len: 16}\n"
                           "model: {layers: 1, d_model: 16, heads: 2}\ntrain: {steps: 2}\nresources: {cpus: 1}\n";
  auto run = [&](const std::string& name, const std::string& zip) {
    const fs::path spec = dir / name;
    std::ofstream(spec) << head << "sweep:\n  zip:\n    - " << zip << "\n";
    return RunProcess({RUNG_CLI_BINARY, "run", spec.string(), "--dir", (dir / "run").string(), "--workers", "1", "--trainer",
                       RUNG_STAND_IN_BINARY},
                      EnvironmentWithout({"RUNG_"}), "", RUNG_SOURCE_DIR);
  };
  const CommandResult first = run("first.yaml", "{position.variant: [rope, lerope], train.lr: [0.001, 0.01]}");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const CommandResult grown = run("grown.yaml", "{position.variant: [nope, rope, lerope], train.lr: [0.1, 0.001, 0.01]}");
  ASSERT_EQ(grown.exit_code, 0) << grown.err;
  for (const char* variant : {"rope", "lerope"}) {
    EXPECT_THAT(ClosingMean(first.out, variant), ::testing::StartsWith("1 ")) << variant << "\n" << first.out;
    EXPECT_EQ(ClosingMean(grown.out, variant), ClosingMean(first.out, variant)) << variant << "\n" << first.out << grown.out;
  }
  EXPECT_THAT(ClosingMean(grown.out, "nope"), ::testing::StartsWith("1 ")) << grown.out;
  EXPECT_NE(ClosingMean(grown.out, "nope"), ClosingMean(grown.out, "rope")) << grown.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rung::cli::testing
