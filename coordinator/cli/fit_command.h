// coordinator/cli/fit_command.h
//
// `rung fit --from-csv FILE --baseline VARIANT`: compute multipliers of every variant of a ladder
// against a baseline (science.md section 6; sweeps/fit/compute_multipliers.h): piecewise in ln C
// (primary), power laws with a shared, free or fixed E, paired per-seed multipliers, bootstrap
// intervals, wall-clock multipliers and the E-sensitivity table. Human tables by default;
// --format json prints a list of objects, --format csv the same rows flat.
//
// Exit codes (exit_codes.h): 0 done; 2 bad input (missing file, bad CSV with file:line and column,
// unknown baseline, bad option values); 1 the computation failed.
#pragma once

#include <CLI/CLI.hpp>

#include "coordinator/cli/ladder_source.h"
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace rung::cli {

struct FitCommandOptions {
  std::string csv_path;
  LadderSource source;  // a stored sweep (source.sweep_id) when csv_path is empty
  std::string baseline;
  std::string format = "table";
  std::string e_grid;  // comma-separated E values in nats; empty: the default grid
  std::optional<double> fixed_e;
  int bootstrap = 1000;
  uint64_t seed = 0;
};

void AddFitCommand(CLI::App& app, int* exit_code);

// The command itself: the report on `out`, errors on `err`; returns the exit code.
int RunFitCommand(const FitCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace rung::cli
