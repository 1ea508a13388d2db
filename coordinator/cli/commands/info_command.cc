// coordinator/cli/commands/info_command.cc
//
// `rung info`: what the coordinator at RUNG_COORDINATOR (or --coordinator) is, as this rung sees it
// (UserService.GetServerInfo): its API and protocol version beside this rung's, whether it was built
// from the same commit, the role the token is given, its clock and since when it runs, and whether
// its database has room to write. A coordinator of another protocol version, or one whose database
// is full, is said and is exit 1, so that scripts can check a coordinator before they submit.
//   table  one line each: coordinator, token, clock, storage
//   json   the ServerInfo message, with this rung's protocol_version and build_commit under "client"
//   csv    one row: api_version, protocol_version, client_protocol_version, build_commit,
//          client_build_commit, caller_role, server_time, started_at, storage_warning
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_tables.h"
#include "coordinator/cli/text_table.h"
#include "core/common/provenance.h"
#include "proto/protocol_version.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct InfoOptions {
  ConnectionOptions connection;
  std::string format = "table";
};

// What a token of `role` may do, in a few words.
std::string RoleText(pb::Role role) {
  switch (role) {
    case pb::ROLE_USER:
      return "USER (submit, change and read sweeps)";
    case pb::ROLE_VIEWER:
      return "VIEWER (read sweeps; no change)";
    case pb::ROLE_WORKER:
      return "WORKER (lease and report trials)";
    default:
      return "none (public methods only)";
  }
}

void PrintInfoText(const pb::ServerInfo& info) {
  const std::string commit = info.build_commit() == BuildCommit()
                                 ? "built from the same commit as this rung"
                                 : "built from commit " + info.build_commit() + " (this rung: " + BuildCommit() + ")";
  const std::string protocol = info.protocol_version() == wire::kProtocolVersion
                                   ? ""
                                   : " (this rung speaks " + std::to_string(wire::kProtocolVersion) + ")";
  const double up_seconds = std::max<double>(0, info.server_time().seconds() - info.started_at().seconds());
  std::cout << "coordinator  " << info.api_version() << ", protocol " << info.protocol_version() << protocol << ", "
            << commit << "\n"
            << "token        " << RoleText(info.caller_role()) << "\n"
            << "clock        " << UtcTime(info.server_time()) << ", up " << HumanDuration(up_seconds) << " (since "
            << UtcTime(info.started_at()) << ")\n"
            << "storage      " << (info.storage_warning().empty() ? "room to write" : info.storage_warning()) << "\n";
}

int RunInfo(CoordinatorConnection& connection, const InfoOptions& options) {
  pb::ServerInfo info;
  grpc::Status status = connection.user().GetServerInfo(connection.Context().get(), pb::GetServerInfoRequest(), &info);
  if (!status.ok()) return ReportRpcError("info", status);
  const std::string role = EnumText(pb::Role_Name(info.caller_role()), "ROLE_");
  if (options.format == "json") {
    nlohmann::json object = ToJson(info);
    object["client"] = {{"protocol_version", wire::kProtocolVersion}, {"build_commit", BuildCommit()}};
    std::cout << object.dump(2) << "\n";
  } else if (options.format == "csv") {
    TextTable table({"api_version", "protocol_version", "client_protocol_version", "build_commit",
                     "client_build_commit", "caller_role", "server_time", "started_at", "storage_warning"});
    table.AddRow({info.api_version(), std::to_string(info.protocol_version()), std::to_string(wire::kProtocolVersion),
                  info.build_commit(), BuildCommit(), role, UtcTime(info.server_time()), UtcTime(info.started_at()),
                  info.storage_warning()});
    table.PrintCsv(std::cout);
  } else {
    PrintInfoText(info);
  }
  if (info.protocol_version() != wire::kProtocolVersion) {
    std::cerr << "rung info: the coordinator speaks protocol " << info.protocol_version() << " and this rung "
              << wire::kProtocolVersion << ": use the rung of the coordinator's release\n";
    return kFailure;
  }
  if (!info.storage_warning().empty()) {
    std::cerr << "rung info: " << info.storage_warning() << "\n";
    return kFailure;
  }
  return kOk;
}

void AddInfoCommand(CLI::App& app, int* exit_code) {
  AddCommand<InfoOptions>(app, exit_code, "info",
                          "The coordinator as this rung sees it: versions, the token's role, its clock, room to write "
                          "(exit 1 for another protocol or a full database)",
                          std::make_shared<InfoOptions>(), RunInfo);
}

}  // namespace

RUNG_CLI_COMMAND("info", kSweeps, AddInfoCommand);

}  // namespace rung::cli
