// coordinator/cli/commands/serve_command.cc
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
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/local_coordinator.h"

namespace rung::cli {
namespace {

namespace fs = std::filesystem;

struct ServeOptions {
  std::string dir;
  std::string listen = "127.0.0.1:0";
  double lease_seconds = 30;
  bool dashboard = false;  // also serve `rung dashboard` (read-only: the viewer token)
  std::string dashboard_listen = "127.0.0.1:8050";
};

std::atomic<int> g_stop_signal{0};
void OnStopSignal(int signal) { g_stop_signal.store(signal); }

// Why `dir` is not a run directory to serve, or "" when it is one.
std::string NotARunDirectory(const RunDirectory& run) {
  std::error_code error;
  if (!fs::exists(run.dir, error)) return run.dir + " does not exist";
  if (!fs::is_directory(run.dir, error)) return run.dir + " is not a folder: give the run directory `rung run` made";
  if (!fs::is_regular_file(run.database(), error)) {
    return run.dir + " is not a run directory: it has no rung.db (`rung run SPEC --dir " + run.dir + "` makes one)";
  }
  return "";
}

int Serve(const ServeOptions& options) {
  const RunDirectory run{fs::absolute(options.dir).lexically_normal().string()};
  if (const std::string why = NotARunDirectory(run); !why.empty()) {
    std::cerr << "rung serve: " << why << "\n";
    return kUsage;
  }
  // Installed before the coordinator starts, so that a Ctrl-C during its start stops it cleanly too.
  ::signal(SIGINT, OnStopSignal);
  ::signal(SIGTERM, OnStopSignal);
  if (const std::uintmax_t bytes = DatabaseBytes(run); bytes >= (std::uintmax_t{256} << 20)) {
    std::cerr << "rung serve: the coordinator reads the whole " << std::fixed << std::setprecision(1)
              << static_cast<double>(bytes) / 1e9 << " GB database (PRAGMA quick_check) before it serves: this can "
              << "take up to " << CoordinatorStartBudget(bytes).count() << " s" << std::endl;
  }
  StatusOr<LocalCoordinator> coordinator = StartLocalCoordinator(run, options.listen, options.lease_seconds);
  if (!coordinator.ok()) {
    std::cerr << "rung serve: cannot serve " << run.dir << ": " << coordinator.status().message() << "\n";
    return kFailure;
  }
  std::cout << "rung serve: serving " << run.dir << " at " << coordinator->address
            << "; Ctrl-C stops it. For the rung commands, in another shell:\n"
            << "export RUNG_COORDINATOR=" << coordinator->address << "\n"
            << "export RUNG_TOKEN_FILE=" << run.user_token() << "\n"
            << "# read-only (queries, no submit, cancel, pause, resume or retry): export RUNG_TOKEN_FILE="
            << run.viewer_token() << "\n"
            << std::flush;
  std::unique_ptr<Subprocess> dashboard;
  if (options.dashboard) {
    StatusOr<LocalDashboard> started =
        StartLocalDashboard(coordinator->address, run.viewer_token(), options.dashboard_listen, run.Path("dashboard.log"));
    if (!started.ok()) {
      std::cerr << "rung serve: the dashboard did not start: " << started.status().message() << "\n";
      coordinator->process->Stop(SIGTERM, std::chrono::seconds(10)).IgnoreError();
      return kFailure;
    }
    dashboard = std::move(started->process);
    std::cout << "rung serve: dashboard at " << started->url << std::endl;
  }
  while (g_stop_signal.load() == 0 && coordinator->process->Running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (g_stop_signal.load() == 0) {
    std::cerr << "rung serve: the coordinator stopped; see " << run.log() << "\n";
    return kFailure;
  }
  if (dashboard) dashboard->Stop(SIGTERM, std::chrono::seconds(10)).IgnoreError();
  StatusOr<ExitStatus> stopped = coordinator->process->Stop(SIGTERM, std::chrono::seconds(10));
  if (!stopped.ok() || !stopped->Succeeded()) {
    std::cerr << "rung serve: the coordinator did not stop cleanly ("
              << (stopped.ok() ? stopped->Describe() : stopped.status().message()) << "); see " << run.log() << "\n";
    return kFailure;
  }
  std::cout << "rung serve: stopped; every answered write is in " << run.database() << "\n";
  return kOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve", "Serve a run directory (what `rung run` leaves) again: a coordinator on loopback, so that rung "
               "results, fit, plot, diag and the rest work on it; prints the lines to export; Ctrl-C stops it");
  command->add_option("dir", options->dir, "Run directory (rung-runs/<name>-<time>, or rung run's --dir)")
      ->required();
  command->add_option("--listen", options->listen, "Address to serve on (loopback; port 0 picks a free port)")
      ->capture_default_str();
  command->add_flag("--dashboard", options->dashboard,
                    "Also serve the web dashboard (rung dashboard, read-only) and print its URL");
  command->add_option("--dashboard-listen", options->dashboard_listen,
                      "Where --dashboard listens (default 127.0.0.1:8050; 127.0.0.1:0 picks a free port)")
      ->type_name("HOST:PORT");
  command->callback([options, exit_code]() { *exit_code = Serve(*options); });
}

RUNG_CLI_COMMAND("serve", kHere, AddServeCommand);

}  // namespace rung::cli
