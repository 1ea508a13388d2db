// coordinator/cli/run_command.h
//
// `rung run SPEC [--workers N] [--dashboard [--dashboard-listen HOST:PORT]]`: the embedded mode.
// Starts a coordinator on loopback with a fresh database, fresh tokens (0600 files) and an artifact
// root in a run directory, submits the spec, starts N local workers (each with its share of the CPU threads), shows live progress, and at the
// end prints the results (final metric per rung and variant over seeds) and, with a baseline and two
// or more rungs, the compute multipliers. Children die with it; Ctrl-C preempts the trials with a
// checkpoint and stops everything. --dashboard serves `rung dashboard` (read-only, the viewer token)
// on the run's coordinator until the run ends and prints its URL.
#pragma once

#include <CLI/CLI.hpp>

namespace rung::cli {

// `rung run`'s worker layout unless told otherwise: kRunDefaultWorkers workers, each with
// RunCpusPerWorker(workers, 0) CPU threads (the machine's online cores shared out, at least 1).
// `rung validate` estimates a calibrated sweep's time for this layout too.
constexpr int kRunDefaultWorkers = 2;
int RunCpusPerWorker(int workers, int cpus_per_worker_option);

void AddRunCommand(CLI::App& app, int* exit_code);

}  // namespace rung::cli
