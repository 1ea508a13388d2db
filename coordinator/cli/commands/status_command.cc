// coordinator/cli/commands/status_command.cc
//
// `rung status SWEEP [--watch [SECONDS]]`: a sweep's progress (sweep_status.h): trials by state per
// rung and variant, compute done, throughput and ETA against the coordinator's clock. --watch
// refreshes until the sweep finishes (exit 1 if it did not succeed), clearing the screen between
// refreshes only when stdout is a terminal. A full disk where the sweep writes is said on stderr
// (without --watch: exit 1).
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/full_disk_report.h"
#include "coordinator/cli/sweep_fetch.h"
#include "coordinator/cli/sweep_status.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct StatusOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  double watch_seconds = 0;  // 0: print once
};

int RunStatus(CoordinatorConnection& connection, const StatusOptions& options) {
  const bool watch = options.watch_seconds > 0;
  // Redraw in place only on a terminal; a file or pipe gets one plain table after another.
  const bool terminal = watch && options.format == "table" && ::isatty(STDOUT_FILENO) == 1;
  while (true) {
    double now = 0;
    std::string storage_warning;
    grpc::Status status = FetchServerTime(connection, &now, &storage_warning);
    if (!status.ok()) return ReportRpcError("status", status);
    pb::GetSweepRequest request;
    request.set_sweep_id(options.sweep_id);
    pb::Sweep sweep;
    status = connection.user().GetSweep(connection.Context().get(), request, &sweep);
    if (!status.ok()) return ReportRpcError("status", status);
    std::vector<pb::Trial> trials;
    status = FetchTrials(connection, options.sweep_id, &trials);
    if (!status.ok()) return ReportRpcError("status", status);
    PrintSweepStatus(sweep, trials, now, options.format, terminal, SearchFlopsToCome(connection, sweep));
    // A full disk anywhere the sweep writes: said on stderr, and (without --watch) exit 1.
    const std::vector<std::string> full_disks = FullDiskReports(connection, storage_warning, sweep, trials, 0);
    for (const std::string& report : full_disks) std::cerr << "rung status: " << report << "\n";
    if (!watch) return full_disks.empty() ? kOk : kFailure;
    if (SweepFinished(sweep)) return sweep.state() == pb::SWEEP_STATE_SUCCEEDED ? kOk : kFailure;
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(options.watch_seconds * 1000)));
  }
}

void AddStatusCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* command = AddCommand<StatusOptions>(
      app, exit_code, "status",
      "A sweep's progress: trials by state per rung and variant, throughput and ETA (--watch to follow); "
      "a full disk where the sweep writes is said on stderr (exit 1)",
      options, RunStatus);
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
  command->add_option("--watch", options->watch_seconds,
                      "Refresh every this many seconds until the sweep finishes (exit 1 if it did not succeed)")
      ->expected(0, 1)
      ->default_str("2");
}

}  // namespace

RUNG_CLI_COMMAND("status", kSweeps, AddStatusCommand);

}  // namespace rung::cli
