// coordinator/dashboard/dashboard_command.h
//
// `rung dashboard [--coordinator ADDR] [--token-file F] [--listen 127.0.0.1:8050]
//                 [--tls-cert F --tls-key F] [--allow-control]`: serves the web dashboard of the
// coordinator's sweeps (dashboard_server.h) until Ctrl-C. Prints, first line on stdout, the URL with
// its fresh login token ("rung dashboard: http://127.0.0.1:8050/?token=..."). Exit codes as the
// other commands: 2 bad options or missing page files, 3 coordinator unreachable, 4 token refused or
// --allow-control without a user token.
#pragma once

#include <CLI/CLI.hpp>

namespace rung::dashboard {

void AddDashboardCommand(CLI::App& app, int* exit_code);

}  // namespace rung::dashboard
