// rung: the command line of rung. Every subcommand lives in its own file (coordinator/cli/commands/,
// and coordinator/dashboard/dashboard_command.cc) and registers itself there
// (coordinator/client/command_registry.h); `rung --help` lists them by section. `rung --version` prints the version and the git commit
// (cmake/build_info.cmake) it was built from.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/client/exit_codes.h"
#include "core/config/config_error.h"
#include "core/common/command_line.h"
#include "core/common/provenance.h"

int main(int argc, char** argv) {
  CLI::App app{"rung: positional-encoding research on transformers at scale.\n"
               "Exit codes: 0 ok, 1 failure, 2 bad input (arguments, spec, CSV, unknown sweep),\n"
               "3 coordinator unreachable, 4 token missing or not allowed."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("rung ") + RUNG_VERSION + " (commit " + rung::BuildCommit() + ")",
                       "Print the version and the git commit it was built from, and exit");
  int exit_code = rung::client::kOk;
  rung::client::AddRegisteredCommands(app, &exit_code);
  // An unknown command is named as such, with the command it may be a slip for (CLI11 would only say
  // that a subcommand is required).
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    bool known = false;
    for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(command->get_name());
      known = known || command->check_name(argv[1]);
    }
    if (!known) {
      const std::string nearest = rung::NearestKey(argv[1], names);
      std::cerr << "rung: unknown command '" << argv[1] << "'"
                << (nearest.empty() ? "" : "; did you mean '" + nearest + "'?")
                << "\nRun with --help for the commands.\n";
      return rung::client::kUsage;
    }
  }
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  return exit_code;
}
