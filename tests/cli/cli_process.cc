// tests/cli/cli_process.cc
#include "tests/cli/cli_process.h"

#include <unistd.h>  // environ

#include "core/common/subprocess.h"


namespace rung::cli::testing {

CommandResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                         const std::string& stdin_text, const std::string& cwd, std::chrono::milliseconds limit) {
  SubprocessOptions options;
  options.argv = argv;
  options.clear_environment = true;
  options.environment = environment;
  options.working_dir = cwd;
  options.stdin_from = Redirect::Text(stdin_text);
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> run = Subprocess::Run(options, limit);
  CommandResult result;
  if (!run.ok()) {
    result.err = run.status().ToString();
    return result;
  }
  result.exit_code = run->exit.ShellCode();
  result.out = std::move(run->stdout_text);
  result.err = std::move(run->stderr_text);
  result.timed_out = run->timed_out;
  return result;
}

std::vector<std::string> EnvironmentWithout(const std::vector<std::string>& prefixes) {
  std::vector<std::string> kept;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    bool drop = false;
    for (const std::string& prefix : prefixes) drop = drop || text.rfind(prefix, 0) == 0;
    if (!drop) kept.push_back(text);
  }
  return kept;
}

}  // namespace rung::cli::testing
