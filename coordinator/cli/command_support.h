// coordinator/cli/command_support.h
//
// What the `rung` commands that talk to a coordinator share: registering a subcommand with the
// connection (and --format) options around a body that gets an open connection, and the printing
// helpers (a number for people). The connection itself, the exit codes and a message as JSON are
// the client library's (coordinator/client/), which the dashboard shares.
#pragma once

#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <google/protobuf/message.h>
#include <google/protobuf/timestamp.pb.h>
#include <nlohmann/json.hpp>

#include "core/common/command_line.h"
#include "coordinator/client/coordinator_connection.h"
#include "coordinator/client/exit_codes.h"
#include "coordinator/client/message_json.h"

namespace rung::cli {

// The client library's connection, exit codes and JSON (coordinator/client/), as the commands name them.
using client::AddConnectionOptions;
using client::ConnectionOptions;
using client::CoordinatorConnection;
using client::ExitCode;
using client::kDenied;
using client::kFailure;
using client::kOk;
using client::kUnavailable;
using client::kUsage;
using client::ReportConnectionError;
using client::ReportRpcError;
using client::ToJson;

// Registers subcommand `name` with the connection options; `run` does the work with an open
// connection and returns the exit code (kUsage where the connection cannot be opened). Options must
// have a `connection` member.
template <typename Options>
CLI::App* AddConnectedCommand(CLI::App& app, int* exit_code, const std::string& name, const std::string& help,
                              std::shared_ptr<Options> options,
                              std::function<int(CoordinatorConnection&, const Options&)> run) {
  CLI::App* command = app.add_subcommand(name, help);
  AddConnectionOptions(command, &options->connection);
  command->callback([options, exit_code, run, name]() {
    StatusOr<std::unique_ptr<CoordinatorConnection>> connection = CoordinatorConnection::Open(options->connection);
    if (!connection.ok()) {
      *exit_code = ReportConnectionError(name, connection.status());
      return;
    }
    *exit_code = run(*connection.value(), *options);
  });
  return command;
}

// AddConnectedCommand with --format table|json|csv. Options must have `connection` and `format` members.
template <typename Options>
CLI::App* AddCommand(CLI::App& app, int* exit_code, const std::string& name, const std::string& help,
                     std::shared_ptr<Options> options,
                     std::function<int(CoordinatorConnection&, const Options&)> run) {
  CLI::App* command = AddConnectedCommand<Options>(app, exit_code, name, help, options, std::move(run));
  command->add_option("--format", options->format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  return command;
}

// The directory of the running executable (rung-coordinator, rung-worker and rung-train are installed
// beside rung); "." when /proc/self/exe cannot be read.
std::string ExecutableDirectory();

// A submission's warnings on stderr, one a line: "LOCATION: warning: PATH: MESSAGE" (spec warnings,
// and a disk with less free space than the sweep is estimated to need).
void PrintSubmissionWarnings(const rung::v1::SubmitSweepResponse& response);

// A config value as tables print it: a string as it is, any other value as JSON ("rope", 0.5, [1,2]).
std::string ValueText(const nlohmann::json& value);

// "2023-11-14 22:13:20Z"; "" for an unset time (seconds 0).
std::string UtcTime(const google::protobuf::Timestamp& time);

// `digits` significant digits; "nan" for NaN.
std::string Number(double value, int digits = 4);

// Number(), but "" for a value that is not finite (undefined: the sd of one value, a mean of none).
std::string NumberOrBlank(double value, int digits = 4);

// The shortest text that reads back as exactly `value` (for CSV: scripts get exact figures, people
// rounded ones); "" for a value that is not finite.
std::string ExactNumber(double value);

// The value, or null when it is not finite (JSON has no NaN).
nlohmann::json NumberOrNull(double value);

}  // namespace rung::cli
