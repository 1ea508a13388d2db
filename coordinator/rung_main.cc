// rung: the command line of rung. Subcommands register themselves from their own files.
//
//   rung validate SPEC        expand and check a sweep spec, print its trials and total compute
//   rung fit --from-csv FILE  compute multipliers of a ladder against a baseline (here)
//   rung fit SWEEP            the same on a stored sweep, computed and stored by the coordinator
//   rung plot --from-csv FILE loss against compute, with fits and multipliers (SVG, PNG)
//   rung diag TRIAL [--plot DIR] a trained model's attention diagnostics (diag_command.h)
//   rung run SPEC [--workers N] [--dashboard] the embedded mode: coordinator, database and workers here (run_command.h)
//   rung serve DIR            a finished (or any) run directory served again on loopback (serve_command.h)
//   rung submit|sweeps|status|trials|show|metrics|cancel|pause|resume|retry|workers
//                             talk to a coordinator (sweep_commands.h)
//   rung results|export|fits|logs  read a sweep's results off a coordinator (query_commands.h)
//   rung dashboard            serve the web dashboard of a coordinator's sweeps (coordinator/dashboard/)
//   rung --version            the version and the git commit (cmake/build_info.cmake) it was built from
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "core/common/command_line.h"
#include "coordinator/cli/diag_command.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/fit_command.h"
#include "coordinator/cli/plot_command.h"
#include "coordinator/cli/query_commands.h"
#include "coordinator/cli/run_command.h"
#include "coordinator/cli/serve_command.h"
#include "coordinator/cli/sweep_commands.h"
#include "coordinator/cli/validate_command.h"
#include "coordinator/dashboard/dashboard_command.h"
#include "core/common/provenance.h"

int main(int argc, char** argv) {
  CLI::App app{"rung: positional-encoding research on transformers at scale.\n"
               "Exit codes: 0 ok, 1 failure, 2 bad input (arguments, spec, CSV, unknown sweep),\n"
               "3 coordinator unreachable, 4 token missing or not allowed."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("rung ") + RUNG_VERSION + " (commit " + rung::BuildCommit() + ")",
                       "Print the version and the git commit it was built from, and exit");
  int exit_code = rung::cli::kOk;
  rung::cli::AddValidateCommand(app, &exit_code);
  rung::cli::AddFitCommand(app, &exit_code);
  rung::cli::AddPlotCommand(app, &exit_code);
  rung::cli::AddSweepCommands(app, &exit_code);
  rung::cli::AddQueryCommands(app, &exit_code);
  rung::cli::AddRunCommand(app, &exit_code);
  rung::cli::AddServeCommand(app, &exit_code);
  rung::cli::AddDiagCommand(app, &exit_code);
  rung::dashboard::AddDashboardCommand(app, &exit_code);
  // An unknown command is named as such (CLI11 would only say that a subcommand is required).
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + command->get_name();
      known = known || command->check_name(argv[1]);
    }
    if (!known) {
      std::cerr << "rung: unknown command '" << argv[1] << "'; the commands are " << names
                << "\nRun with --help for more information.\n";
      return rung::cli::kUsage;
    }
  }
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  return exit_code;
}
