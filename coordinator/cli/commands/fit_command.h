// coordinator/cli/commands/fit_command.h
//
// `rung fit --from-csv FILE --baseline VARIANT` (computed here) or `rung fit SWEEP` (computed and stored
// by the coordinator, UserService.Fit; stored fits: `rung fits SWEEP`): compute multipliers of every variant of a ladder
// against a baseline (docs/science.md section 6; sweeps/fit/compute_multipliers.h): piecewise in ln C
// (primary), power laws with a shared, free or fixed E, paired per-seed multipliers, bootstrap
// intervals, wall-clock multipliers and the E-sensitivity table. Human tables by default;
// --format json prints a list of objects, --format csv the same rows flat.
//
// Exit codes (exit_codes.h): 0 done; 2 bad input (missing file, bad CSV with file:line and column,
// unknown baseline, bad option values; for SWEEP also an unknown sweep or too few finished ladder
// points); 1 the computation failed; 3 coordinator unreachable; 4 token refused.
#pragma once

#include <CLI/CLI.hpp>

#include "coordinator/cli/ladder_source.h"
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rung::cli {

struct FitCommandOptions {
  std::string csv_path;
  LadderSource source;  // a stored sweep (source.sweep_id) when csv_path is empty
  std::string baseline;
  std::string metric;  // SWEEP only: "" = the sweep's metric
  std::vector<std::string> variant_keys;  // SWEEP only: empty = every sweep axis but seed
  std::string format = "table";
  std::string e_grid;  // comma-separated E values in nats; empty: the default grid
  std::optional<double> fixed_e;
  std::string lr_policy = "best";  // SWEEP only, tuned sweeps: best | value=X
  std::string compute;             // SWEEP only: nonembedding (default) | matrix | total
  std::string power_law_residuals = "ln";  // ln | nats
  int bootstrap = 1000;
  uint64_t seed = 0;
};

void AddFitCommand(CLI::App& app, int* exit_code);

// The command itself: the report on `out`, errors on `err`; returns the exit code.
int RunFitCommand(const FitCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace rung::cli
