// docs/cli.md's table of exit codes against tests/cli/golden/exit_codes.test: every row of the table
// has a case that makes its program exit with its code (the golden test runs it), and every case a
// row, so the documentation and the programs cannot drift apart.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "tests/cli/golden_file.h"

namespace rung::cli::testing {
namespace {

using ProgramCode = std::pair<std::string, int>;

// Rows no golden case can produce, with why: the test checks they are still rows of the table.
const std::set<ProgramCode> kRowsWithoutACase = {
    {"rung-worker", 1},  // a coordinator that refuses a worker for other reasons than its token is another build
    {"rung-worker", 5},  // its allocation's end: tests/worker/agent/agent_test.cc, RungWorkerUnderSlurm...
    {"rung-train", 5},   // a full disk: a tmpfs in a mount namespace (tests/core/train/full_disk_test.cc)
};

std::string ReadSource(const std::string& relative) {
  std::ifstream stream(std::string(RUNG_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << stream.rdbuf();
  return text.str();
}

// The program a golden command runs: its first word after any `env` words.
std::string ProgramOf(const std::string& command) {
  StatusOr<std::vector<std::string>> words = SplitCommandLine(command);
  if (!words.ok()) return "";
  size_t at = 0;
  if (at < words->size() && (*words)[at] == "env") {
    ++at;
    while (at < words->size()) {
      if ((*words)[at] == "-u") {
        at += 2;  // -u NAME
      } else if ((*words)[at].find('=') != std::string::npos) {
        ++at;  // NAME=VALUE
      } else {
        break;
      }
    }
  }
  return at < words->size() ? (*words)[at] : "";
}

TEST(ExitCodeTable, EveryRowHasACaseAndEveryCaseARow) {
  const std::string table = ReadSource("docs/cli.md");
  ASSERT_FALSE(table.empty()) << "docs/cli.md is missing";
  std::set<ProgramCode> rows;
  const std::regex row(R"(^\| `([a-z-]+)` \| (\d+) \|)");
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, row)) rows.insert({match[1], std::stoi(match[2])});
  }
  ASSERT_GE(rows.size(), 20u);

  StatusOr<GoldenFile> golden = ParseGoldenFile(ReadSource("tests/cli/golden/exit_codes.test"), "exit_codes.test");
  ASSERT_TRUE(golden.ok()) << golden.status().message();
  std::set<ProgramCode> cases;
  const std::regex title(R"(^([a-z-]+) exits (\d+): )");
  for (const GoldenCase& golden_case : golden->cases) {
    std::smatch match;
    ASSERT_TRUE(std::regex_search(golden_case.title, match, title))
        << "exit_codes.test:" << golden_case.line << ": a title starts 'PROGRAM exits CODE: '";
    const ProgramCode said{match[1], std::stoi(match[2])};
    EXPECT_EQ(ProgramOf(golden_case.command), said.first) << "exit_codes.test:" << golden_case.line;
    EXPECT_EQ(golden_case.exit_code.value_or(0), said.second) << "exit_codes.test:" << golden_case.line;
    cases.insert(said);
  }

  for (const ProgramCode& entry : rows) {
    EXPECT_TRUE(cases.count(entry) || kRowsWithoutACase.count(entry))
        << "docs/cli.md: " << entry.first << " exits " << entry.second << " has no case in exit_codes.test";
  }
  for (const ProgramCode& entry : cases) {
    EXPECT_TRUE(rows.count(entry)) << "exit_codes.test: " << entry.first << " exits " << entry.second
                                   << " is not a row of docs/cli.md";
  }
  for (const ProgramCode& entry : kRowsWithoutACase) {
    EXPECT_TRUE(rows.count(entry)) << entry.first << " " << entry.second << " is no longer a row: drop it here";
    EXPECT_FALSE(cases.count(entry)) << entry.first << " " << entry.second << " has a case now: drop it here";
  }
}

}  // namespace
}  // namespace rung::cli::testing
