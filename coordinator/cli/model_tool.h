// coordinator/cli/model_tool.h
//
// The commands that work on one model outside any sweep (`rung eval`, `rung export-hf`) run rung-model
// (tools/rung-model/main.cc), since the `rung` CLI never links LibTorch: `rung NAME ARGS` replaces
// itself with `rung-model NAME ARGS` from the folder `rung` is in, every argument (--help included)
// passed as given, so the options, help, output and exit codes are rung-model's.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace rung::cli {

// Runs `rung-model SUBCOMMAND ARGS` and waits for it: its exit and its stdout and stderr collected.
// Errors: FAILED_PRECONDITION where rung-model cannot be started (a build without LibTorch).
StatusOr<SubprocessResult> RunModelToolCollecting(const std::string& subcommand, const std::vector<std::string>& arguments);

// Adds the subcommand `name` that runs `rung-model name ARGS`; *exit_code is set only where rung-model
// cannot be run (1, with a message).
void AddModelToolCommand(CLI::App& app, int* exit_code, const std::string& name, const std::string& description);

}  // namespace rung::cli
