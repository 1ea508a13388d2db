// tests/cli/cli_process.h
//
// Runs a command line tool to its end, as the CLI tests run the real `rung` binary: stdin from a
// text, stdout and stderr captured whole, the environment given explicitly, a time limit.
//
// Example:
//   CommandResult result = RunProcess({RUNG_CLI_BINARY, "sweeps"}, {"RUNG_COORDINATOR=127.0.0.1:4"});
//   EXPECT_EQ(result.exit_code, 0) << result.err;
//
// Thread safety: reentrant (each call uses its own temporary files).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace rung::cli::testing {

struct CommandResult {
  int exit_code = -1;  // the exit status; 128 + N when killed by signal N; -1 when it did not start
  std::string out;     // everything written to stdout
  std::string err;     // everything written to stderr
  bool timed_out = false;
};

// Runs argv[0] (a path) with `environment` (NAME=VALUE entries: the whole environment), in `cwd`
// ("" = this process's), with `stdin_text` on its standard input. Kills it (SIGKILL) after `limit`.
CommandResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                         const std::string& stdin_text = "", const std::string& cwd = "",
                         std::chrono::milliseconds limit = std::chrono::seconds(60));

// This process's environment without the variables whose names start with one of `prefixes`.
std::vector<std::string> EnvironmentWithout(const std::vector<std::string>& prefixes);

}  // namespace rung::cli::testing
