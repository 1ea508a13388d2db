// coordinator/cli/commands/logs_command.cc
//
// `rung logs TRIAL [--follow] [--attempt N] [--tail N] [--source record,stderr,event]`: a trial's
// record lines, trainer stderr and state changes, oldest first (UserService.GetLogs); --follow keeps
// printing new lines until the trial finishes. --format json prints one object per line. --tail 0
// prints no old line (with --follow: only new ones); a negative --tail or --attempt, or an attempt
// the trial does not have, is exit 2.
#include <cctype>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;
using nlohmann::json;

struct LogsOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t trial_id = 0;
  bool follow = false;
  int64_t attempt = 0;
  std::optional<int64_t> tail;  // unset: every line
  std::vector<std::string> sources;
};

// Reads a GetLogs stream to its end; `each` sees every entry.
grpc::Status ReadLogs(CoordinatorConnection& connection, const pb::GetLogsRequest& request,
                      const std::function<void(const pb::LogEntry&)>& each) {
  std::unique_ptr<grpc::ClientContext> context = request.follow() ? connection.StreamContext() : connection.Context();
  std::unique_ptr<grpc::ClientReader<pb::LogEntry>> stream = connection.user().GetLogs(context.get(), request);
  pb::LogEntry entry;
  while (stream->Read(&entry)) each(entry);
  return stream->Finish();
}

int RunLogs(CoordinatorConnection& connection, const LogsOptions& options) {
  if (options.tail && *options.tail < 0) {
    std::cerr << "rung logs: --tail " << *options.tail << ": expected a count >= 0 (0 prints no old lines)\n";
    return kUsage;
  }
  if (options.tail && *options.tail > std::numeric_limits<int32_t>::max()) {
    std::cerr << "rung logs: --tail " << *options.tail << " is too large\n";
    return kUsage;
  }
  if (options.attempt < 0) {
    std::cerr << "rung logs: --attempt " << options.attempt << ": attempts count from 1\n";
    return kUsage;
  }
  pb::GetLogsRequest request;
  request.set_trial_id(options.trial_id);
  request.set_attempt(options.attempt);
  request.set_follow(options.follow);
  for (const std::string& source : options.sources) {
    if (source == "record") request.set_include_records(true);
    if (source == "stderr") request.set_include_stderr(true);
    if (source == "event") request.set_include_events(true);
  }
  // CSV: the header once the trial is known to be there (a refused call prints nothing on stdout).
  bool header_due = options.format == "csv";
  auto header = [&header_due] {
    if (header_due) std::cout << "attempt,source,time,text\n";
    header_due = false;
  };
  // --tail 0: no old line. The request's tail 0 means every line, so the lines there are now are
  // counted (which also checks the trial and attempt) and, when following, skipped.
  int64_t skip = 0;
  if (options.tail && *options.tail == 0) {
    pb::GetLogsRequest count = request;
    count.set_follow(false);
    grpc::Status status = ReadLogs(connection, count, [&skip](const pb::LogEntry&) { ++skip; });
    if (!status.ok()) return ReportRpcError("logs", status);
    header();
    if (!options.follow) return kOk;
  } else if (options.tail) {
    request.set_tail(static_cast<int32_t>(*options.tail));
  }
  grpc::Status status = ReadLogs(connection, request, [&](const pb::LogEntry& entry) {
    if (skip > 0) {
      --skip;
      return;
    }
    header();
    std::string source = pb::LogEntry::Source_Name(entry.source());
    source = source.substr(std::string("SOURCE_").size());
    for (char& c : source) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string time = UtcTime(entry.time());
    if (options.format == "json") {
      std::cout << json{{"attempt", entry.attempt()}, {"source", source}, {"time", time}, {"text", entry.text()}}.dump()
                << "\n";
    } else if (options.format == "csv") {
      TextTable row({"attempt", "source", "time", "text"});
      std::ostringstream line;
      row.AddRow({std::to_string(entry.attempt()), source, time, entry.text()});
      row.PrintCsv(line);
      const std::string text = line.str();
      std::cout << text.substr(text.find('\n') + 1);  // without the header
    } else {
      std::cout << time << "  a" << entry.attempt() << "  " << source << std::string(7 - source.size(), ' ') << " "
                << entry.text() << "\n";
    }
    std::cout.flush();
  });
  if (!status.ok()) return ReportRpcError("logs", status);
  header();  // no entry: the header alone
  return kOk;
}

void AddLogsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<LogsOptions>();
  CLI::App* command = AddCommand<LogsOptions>(
      app, exit_code, "logs",
      "A trial's logs: the trainer's record lines, its stderr and the trial's state changes, oldest first;\n"
      "--follow keeps printing new lines until the trial finishes. --format json prints one object per line.",
      options, RunLogs);
  command->add_option("trial", options->trial_id, "Trial id")->required();
  command->add_flag("--follow,-f", options->follow, "Keep printing new lines until the trial finishes");
  command->add_option("--attempt", options->attempt, "Only this attempt (default: every attempt)")->type_name("N");
  command->add_option("--tail", options->tail, "Only the last N lines of each source (0: none; with --follow, new lines only)")
      ->type_name("N");
  command->add_option("--source", options->sources, "Only these sources, comma-separated: record,stderr,event")
      ->delimiter(',')
      ->check(CLI::IsMember({"record", "stderr", "event"}));
}

}  // namespace

RUNG_CLI_COMMAND("logs", kResults, AddLogsCommand);

}  // namespace rung::cli
