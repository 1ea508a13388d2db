#include "coordinator/cli/model_tool.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "coordinator/cli/command_support.h"
#include "coordinator/client/exit_codes.h"

namespace rung::cli {
namespace {

// Replaces this process with `rung-model SUBCOMMAND ARGS`; returns only where it cannot (then the exit code).
int RunModelTool(const std::string& subcommand, const std::vector<std::string>& arguments) {
  const std::string binary = ExecutableDirectory() + "/rung-model";
  std::vector<std::string> words = {"rung-model", subcommand};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(binary.c_str(), argv.data());
  std::cerr << "rung " << subcommand << ": cannot run " << binary << ": " << std::strerror(errno)
            << " (rung-model is built with LibTorch: a build without it has no `rung " << subcommand << "`)\n";
  return client::kFailure;
}

}  // namespace

StatusOr<SubprocessResult> RunModelToolCollecting(const std::string& subcommand, const std::vector<std::string>& arguments) {
  SubprocessOptions options;
  options.argv = {ExecutableDirectory() + "/rung-model", subcommand};
  options.argv.insert(options.argv.end(), arguments.begin(), arguments.end());
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  options.die_with_parent = true;
  StatusOr<SubprocessResult> result = Subprocess::Run(options);
  if (!result.ok()) {
    return Status::FailedPrecondition("cannot run " + options.argv[0] + " (rung-model is built with LibTorch): " +
                                      result.status().message());
  }
  return result;
}

void AddModelToolCommand(CLI::App& app, int* exit_code, const std::string& name, const std::string& description) {
  CLI::App* command = app.add_subcommand(name, description);
  // Every argument, --help included, is rung-model's.
  command->set_help_flag();
  command->prefix_command();
  command->allow_extras();
  command->callback([command, exit_code, name] { *exit_code = RunModelTool(name, command->remaining()); });
}

}  // namespace rung::cli
