// coordinator/dashboard/dashboard_command.cc
//
// `rung dashboard [--coordinator ADDR] [--token-file F] [--listen 127.0.0.1:8050]
//                 [--tls-cert F --tls-key F] [--allow-control]`: serves the web dashboard of the
// coordinator's sweeps (dashboard_server.h) until Ctrl-C. Prints, first line on stdout, the URL with
// its fresh login token ("rung dashboard: http://127.0.0.1:8050/?token=..."). Exit codes as the
// other commands: 2 bad options or missing page files, 3 coordinator unreachable, 4 token refused or
// --allow-control without a user token.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include "coordinator/client/command_registry.h"
#include "coordinator/client/exit_codes.h"
#include "coordinator/dashboard/dashboard_server.h"

namespace rung::dashboard {
namespace {

std::atomic<int> g_stop_signal{0};
void OnStopSignal(int signal) { g_stop_signal.store(signal); }

int ExitCodeOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnavailable:
      return client::kUnavailable;
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:
      return client::kDenied;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return client::kUsage;
    default:
      return client::kFailure;
  }
}

}  // namespace

void AddDashboardCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DashboardOptions>();
  CLI::App* command = app.add_subcommand(
      "dashboard", "Serve a web dashboard of the coordinator's sweeps (live curves, tables, fits); prints its URL");
  client::AddConnectionOptions(command, &options->connection);
  command->add_option("--listen", options->listen, "HOST:PORT to serve on (default 127.0.0.1:8050; 0 picks a port); "
                                                   "off loopback only with --tls-cert and --tls-key")
      ->type_name("HOST:PORT");
  command->add_option("--tls-cert", options->tls_cert_file, "PEM certificate chain: serve HTTPS")->type_name("FILE");
  command->add_option("--tls-key", options->tls_key_file, "PEM private key of --tls-cert")->type_name("FILE");
  command->add_flag("--allow-control", options->allow_control,
                    "Pause, resume, cancel and retry buttons (needs a user token, not a viewer token)");
  command->add_option("--web-root", options->web_root,
                      "Folder of the bundled page (default: dashboard/ beside this executable)")
      ->type_name("DIR");
  command->callback([options, exit_code] {
    StatusOr<std::unique_ptr<DashboardServer>> server = DashboardServer::Start(*options);
    if (!server.ok()) {
      std::cerr << "rung dashboard: " << server.status().message() << "\n";
      *exit_code = ExitCodeOf(server.status());
      return;
    }
    std::cout << "rung dashboard: " << (*server)->url() << std::endl;
    std::cout << "rung dashboard: open that URL (it logs this browser in); Ctrl-C stops the dashboard"
              << (options->allow_control ? "; control buttons are on" : "") << std::endl;
    ::signal(SIGINT, OnStopSignal);
    ::signal(SIGTERM, OnStopSignal);
    ::signal(SIGPIPE, SIG_IGN);
    std::thread stopper([&server] {
      while (g_stop_signal.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      (*server)->Stop();
    });
    (*server)->Wait();
    g_stop_signal.store(g_stop_signal.load() == 0 ? SIGTERM : g_stop_signal.load());
    stopper.join();
    *exit_code = client::kOk;
  });
}

RUNG_CLI_COMMAND("dashboard", kBrowser, AddDashboardCommand);

}  // namespace rung::dashboard
