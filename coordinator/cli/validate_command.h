// coordinator/cli/validate_command.h
//
// `rung validate SPEC`: parses, validates and expands a sweep spec without a coordinator, and prints
// the trial table (rung, axis values, N, tokens, FLOPs, identity), the total compute and an
// estimated time from a measured training throughput. Errors: every one with file:line:col on
// stderr, exit code 2; warnings on stderr.
#pragma once

#include <CLI/CLI.hpp>

namespace rung::cli {

void AddValidateCommand(CLI::App& app, int* exit_code);

}  // namespace rung::cli
