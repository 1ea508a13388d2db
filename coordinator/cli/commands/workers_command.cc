// coordinator/cli/commands/workers_command.cc
//
// `rung workers [--include-gone] [--release WORKER]`: the workers registered with the coordinator
// (UserService.ListWorkers): host, CPU slots, GPUs, BLAS kernel, running trials, when it stops by
// itself (its allocation's end less its margin, where it registered one), gone, quarantined since,
// and below the table why each quarantined one is. --release lifts a worker's quarantine so
// that it leases again (UserService.ReleaseWorker). --include-gone: also workers not seen for
// longer than a lease.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct WorkersOptions {
  ConnectionOptions connection;
  std::string format = "table";
  std::string release;        // --release: the worker whose quarantine to lift
  bool include_gone = false;  // --include-gone
};

int ReleaseWorker(CoordinatorConnection& connection, const WorkersOptions& options) {
  pb::ReleaseWorkerRequest request;
  request.set_worker_id(options.release);
  pb::Worker released;
  grpc::Status status = connection.user().ReleaseWorker(connection.Context().get(), request, &released);
  if (!status.ok()) return ReportRpcError("workers --release", status);
  if (options.format != "table") {
    std::cout << ToJson(released).dump(2) << "\n";
  } else {
    std::cout << "worker " << released.worker_id() << " released from quarantine: it leases again\n";
  }
  return kOk;
}

int RunWorkers(CoordinatorConnection& connection, const WorkersOptions& options) {
  if (!options.release.empty()) return ReleaseWorker(connection, options);
  pb::ListWorkersRequest request;
  request.set_include_gone(options.include_gone);
  pb::ListWorkersResponse response;
  grpc::Status status = connection.user().ListWorkers(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("workers", status);
  TextTable table({"worker", "host", "cpu_slots", "gpus", "blas_kernel", "running", "stops", "gone", "quarantined"});
  std::vector<std::string> quarantines;
  for (const pb::Worker& worker : response.workers()) {
    const bool quarantined = !worker.quarantine_reason().empty();
    table.AddRow({worker.worker_id(), worker.host(), std::to_string(worker.cpu_slots()),
                  std::to_string(worker.gpus_size()), worker.blas_kernel(),
                  std::to_string(worker.running_trial_ids_size()),
                  worker.has_stops_at() ? UtcTime(worker.stops_at()) : "", worker.gone() ? "yes" : "",
                  quarantined ? UtcTime(worker.quarantined_at()) : ""},
                 ToJson(worker));
    if (quarantined) quarantines.push_back(worker.worker_id() + " quarantined: " + worker.quarantine_reason());
  }
  table.Print(std::cout, options.format);
  if (options.format == "table") {
    for (const std::string& line : quarantines) std::cout << "\n" << line << "\n";
  }
  return kOk;
}

void AddWorkersCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<WorkersOptions>();
  CLI::App* command = AddCommand<WorkersOptions>(
      app, exit_code, "workers",
      "The workers registered with the coordinator, and why any is quarantined (--release ID lifts it)", options,
      RunWorkers);
  command->add_option("--release", options->release, "Lift this worker's quarantine, so that it leases again")
      ->type_name("WORKER");
  command->add_flag("--include-gone", options->include_gone, "Also workers not seen for longer than a lease");
}

}  // namespace

RUNG_CLI_COMMAND("workers", kSweeps, AddWorkersCommand);

}  // namespace rung::cli
