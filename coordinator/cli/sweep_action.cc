#include "coordinator/cli/sweep_action.h"

#include <memory>

#include "coordinator/cli/sweep_tables.h"

namespace rung::cli {

void AddSweepActionCommand(CLI::App& app, int* exit_code, const std::string& name, const std::string& help,
                           bool takes_reason, SweepActionCall call) {
  auto options = std::make_shared<SweepActionOptions>();
  CLI::App* command = AddCommand<SweepActionOptions>(
      app, exit_code, name, help, options,
      [call, name](CoordinatorConnection& connection, const SweepActionOptions& o) {
        rung::v1::Sweep sweep;
        grpc::Status status = call(connection, o, &sweep);
        if (!status.ok()) return ReportRpcError(name, status);
        PrintSweeps({sweep}, o.format);
        return static_cast<int>(kOk);
      });
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
  if (takes_reason) command->add_option("--reason", options->reason, "Why (recorded with the event)");
}

}  // namespace rung::cli
