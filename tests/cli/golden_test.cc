// tests/cli/golden_test.cc
//
// The golden tests of the `rung` command line: one test per file tests/cli/golden/*.test (format:
// golden_file.h), each against a fresh GoldenCoordinator (golden_fixture.h). Every case runs the
// real rung binary (or rung-coordinator, rung-worker, rung-train, rung-data from the same folder; a case of a
// binary the build does not have is skipped) as a process, with tests/cli/fixture/hostile/ copied
// to ${SCRATCH}/hostile/ first (its links as links, hostile/outputs/read-only.csv made 0444), in the
// repository's folder, with RUNG_COORDINATOR and RUNG_TOKEN_FILE naming the fixture's coordinator
// and user token (its other RUNG_* variables removed, LC_ALL=C, TZ=UTC), and compares its exit
// code, stdout, stderr and files with the file's expectations; a mismatch fails with a line diff.
// RUNG_GOLDEN_UPDATE=1 rewrites the files with what the commands did instead (review the diff by eye).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/cli/cli_process.h"
#include "tests/cli/golden_file.h"
#include "tests/cli/golden_fixture.h"

namespace rung::cli::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::stringstream text;
  text << stream.rdbuf();
  return text.str();
}

std::vector<std::string> GoldenFiles() {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(fs::path(RUNG_SOURCE_DIR) / "tests/cli/golden", error)) {
    if (entry.path().extension() == ".test") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool UpdateMode() {
  const char* value = std::getenv("RUNG_GOLDEN_UPDATE");
  return value != nullptr && std::string(value) == "1";
}

// What a case's command runs with: argv and the environment changes of a leading `env`.
struct Invocation {
  std::vector<std::string> argv;
  std::vector<std::string> set;    // NAME=VALUE
  std::vector<std::string> unset;  // NAME
};

StatusOr<Invocation> ParseInvocation(const std::string& command) {
  RUNG_ASSIGN_OR_RETURN(const std::vector<std::string> words, SplitCommandLine(command));
  Invocation invocation;
  size_t at = 0;
  if (at < words.size() && words[at] == "env") {
    ++at;
    while (at < words.size()) {
      const std::string& word = words[at];
      if (word == "-u" && at + 1 < words.size()) {
        invocation.unset.push_back(words[at + 1]);
        at += 2;
      } else if (word.find('=') != std::string::npos) {
        invocation.set.push_back(word);
        ++at;
      } else {
        break;
      }
    }
  }
  static const std::vector<std::string> kBinaries = {"rung", "rung-coordinator", "rung-worker", "rung-train",
                                                     "rung-data"};
  if (at >= words.size() || std::find(kBinaries.begin(), kBinaries.end(), words[at]) == kBinaries.end()) {
    return Status::InvalidArgument(
        "a golden command runs rung, rung-coordinator, rung-worker, rung-train or rung-data (optionally after env "
        "NAME=VALUE or -u NAME): " +
        command);
  }
  invocation.argv.push_back((fs::path(RUNG_CLI_BINARY).parent_path() / words[at]).string());
  invocation.argv.insert(invocation.argv.end(), words.begin() + static_cast<std::ptrdiff_t>(at) + 1, words.end());
  return invocation;
}

std::vector<std::string> Environment(const GoldenCoordinator& coordinator, const Invocation& invocation) {
  std::vector<std::string> environment = EnvironmentWithout({"RUNG_", "LC_ALL=", "TZ=", "COLUMNS=", "XDG_CACHE_HOME="});
  environment.push_back("RUNG_COORDINATOR=" + coordinator.address());
  // No calibration cache of the machine's user: `rung validate` prints its uncalibrated estimate.
  environment.push_back("XDG_CACHE_HOME=" + coordinator.scratch() + "/cache");
  environment.push_back("RUNG_TOKEN_FILE=" + coordinator.user_token_file());
  environment.push_back("LC_ALL=C");
  environment.push_back("TZ=UTC");
  for (const std::string& name : invocation.unset) {
    environment.erase(std::remove_if(environment.begin(), environment.end(),
                                     [&name](const std::string& entry) { return entry.rfind(name + "=", 0) == 0; }),
                      environment.end());
  }
  for (const std::string& entry : invocation.set) {
    const std::string name = entry.substr(0, entry.find('='));
    environment.erase(std::remove_if(environment.begin(), environment.end(),
                                     [&name](const std::string& each) { return each.rfind(name + "=", 0) == 0; }),
                      environment.end());
    environment.push_back(entry);
  }
  return environment;
}

class GoldenFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenFileTest, Matches) {
  const std::string path = GetParam();
  const std::string name = fs::relative(path, RUNG_SOURCE_DIR).string();
  StatusOr<GoldenFile> file = ParseGoldenFile(ReadText(path), name);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  StatusOr<std::unique_ptr<GoldenCoordinator>> started = GoldenCoordinator::Start();
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  GoldenCoordinator& coordinator = **started;

  // ${NAME} in commands and file paths; the values back to their names in what the commands print.
  std::error_code ignored;
  const std::string scratch = coordinator.scratch();
  const std::string scratch_real = fs::weakly_canonical(scratch, ignored).string();
  const std::vector<std::pair<std::string, std::string>> names = {
      {"${SOURCE}", RUNG_SOURCE_DIR}, {"${SCRATCH}", scratch}, {"${COORDINATOR}", coordinator.address()}};
  const std::vector<std::pair<std::string, std::string>> values = {{RUNG_SOURCE_DIR, "${SOURCE}"},
                                                                   {scratch, "${SCRATCH}"},
                                                                   {scratch_real, "${SCRATCH}"},
                                                                   {coordinator.address(), "${COORDINATOR}"}};
  // The damaged files of the hostile cases, copied so that what a command writes beside them stays
  // in the scratch folder; symbolic links copied as links (hostile/outputs/link.csv), and
  // hostile/outputs/read-only.csv made 0444 (git keeps no such mode).
  fs::copy(fs::path(RUNG_SOURCE_DIR) / "tests/cli/fixture/hostile", fs::path(scratch) / "hostile",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks, ignored);
  fs::permissions(fs::path(scratch) / "hostile/outputs/read-only.csv",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read, ignored);
  const bool update = UpdateMode();
  for (GoldenCase& golden : file->cases) {
    SCOPED_TRACE(name + ":" + std::to_string(golden.line) + ": " + golden.title);
    StatusOr<Invocation> invocation = ParseInvocation(ReplaceAll(golden.command, names));
    ASSERT_TRUE(invocation.ok()) << invocation.status().ToString();
    if (!fs::exists(invocation->argv.front())) {  // rung-train without LibTorch, rung-data without SentencePiece
      std::cout << "[ SKIPPED  ] " << golden.title << ": " << invocation->argv.front() << " is not built\n";
      continue;
    }
    const CommandResult result = RunProcess(invocation->argv, Environment(coordinator, *invocation),
                                            golden.stdin_text.value_or(""), RUNG_SOURCE_DIR);
    ASSERT_FALSE(result.timed_out) << golden.command << " did not finish in time";
    const std::string out = ReplaceAll(result.out, values), err = ReplaceAll(result.err, values);
    std::vector<std::string> file_texts;
    for (const GoldenFileExpectation& expected : golden.files) {
      const std::string file_path = ReplaceAll(expected.path, names);
      file_texts.push_back(fs::exists(file_path) ? ReplaceAll(ReadText(file_path), values)
                                                 : "(no file " + expected.path + ")\n");
    }
    if (update) {
      // "contains" sections are kept as written: they still have to hold.
      std::string why;
      if (golden.stdout_expected && golden.stdout_expected->contains &&
          !MeetsExpectation(*golden.stdout_expected, out, &why)) {
        ADD_FAILURE() << "stdout " << why << "\n  command: " << golden.command;
      }
      if (golden.stderr_expected && golden.stderr_expected->contains &&
          !MeetsExpectation(*golden.stderr_expected, err, &why)) {
        ADD_FAILURE() << "stderr " << why << "\n  command: " << golden.command;
      }
      golden.exit_code = result.exit_code;
      if (!golden.stdout_expected || !golden.stdout_expected->contains) golden.stdout_expected = GoldenExpectation{false, out};
      if ((golden.stderr_expected && !golden.stderr_expected->contains) || (!golden.stderr_expected && !err.empty())) {
        golden.stderr_expected = GoldenExpectation{false, err};
      }
      for (size_t index = 0; index < golden.files.size(); ++index) {
        if (!golden.files[index].expected.contains) golden.files[index].expected.text = file_texts[index];
      }
      continue;
    }
    const std::string context = "\n  command: " + golden.command + "\n  stderr: " + err;
    EXPECT_EQ(result.exit_code, golden.exit_code.value_or(0)) << "exit code" << context;
    std::string why;
    if (golden.stdout_expected && !MeetsExpectation(*golden.stdout_expected, out, &why)) {
      ADD_FAILURE() << "stdout " << why << context;
    }
    if (golden.stderr_expected && !MeetsExpectation(*golden.stderr_expected, err, &why)) {
      ADD_FAILURE() << "stderr " << why << "\n  command: " << golden.command;
    }
    for (size_t index = 0; index < golden.files.size(); ++index) {
      if (!MeetsExpectation(golden.files[index].expected, file_texts[index], &why)) {
        ADD_FAILURE() << "file " << golden.files[index].path << " " << why << context;
      }
    }
  }
  if (update) {
    const std::string text = FormatGoldenFile(*file);
    if (text != ReadText(path)) {
      std::ofstream(path, std::ios::binary) << text;
      std::cerr << "rewrote " << name << "\n";
    }
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string stem = fs::path(info.param).stem().string();
  for (char& c : stem) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return stem;
}

INSTANTIATE_TEST_SUITE_P(golden, GoldenFileTest, ::testing::ValuesIn(GoldenFiles()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenFileTest);

}  // namespace
}  // namespace rung::cli::testing
