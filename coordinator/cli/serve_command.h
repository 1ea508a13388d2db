// coordinator/cli/serve_command.h
//
// `rung serve DIR [--listen 127.0.0.1:0] [--dashboard [--dashboard-listen HOST:PORT]]`: serves a run
// directory again (what `rung run` leaves, local_coordinator.h: its database, artifacts and tokens)
// with a coordinator on loopback, so that
// `rung results`, `fit`, `plot`, `diag` and the rest work on a finished run. Prints the lines to
// export (the address, the user token file; the viewer token file for read-only use), then serves
// until Ctrl-C (SIGINT) or SIGTERM, which stop the coordinator cleanly (exit 0). --dashboard also
// serves `rung dashboard` on it with the viewer token (read-only) and prints its URL.
//
// Refused before anything starts, with exit 2: a DIR that does not exist, is not a folder, or has
// no rung.db (not a run directory). A coordinator that cannot serve it (another coordinator holds
// the database: `rung run` still runs there, or a `rung serve` already serves it; a damaged
// database) is exit 1 with what the coordinator said.
#pragma once

#include <CLI/CLI.hpp>

namespace rung::cli {

void AddServeCommand(CLI::App& app, int* exit_code);

}  // namespace rung::cli
