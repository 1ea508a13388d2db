// coordinator/cli/commands/export_command.cc
//
// `rung export SWEEP [--format csv|json|jsonl] [--table trials|ladder] [--out FILE]`: every trial's
// config (flattened into config.<key> columns in CSV), provenance and summaries, or the ladder CSV
// `rung fit --from-csv` reads (UserService.Export, streamed). --out is written to a temporary file
// beside FILE, synced, then renamed over it, so FILE is either the old file or the whole new one,
// with the mode the umask gives a new file (core/common/atomic_file.h). A refused export (unknown
// sweep, the ladder as JSON) writes nothing to stdout or FILE.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "core/common/atomic_file.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct ExportOptions {
  ConnectionOptions connection;
  std::string format = "csv";
  std::string table = "trials";
  int64_t sweep_id = 0;
  std::string out;
};

int RunExport(CoordinatorConnection& connection, const ExportOptions& options) {
  pb::ExportRequest request;
  request.set_sweep_id(options.sweep_id);
  request.set_table(options.table == "ladder" ? pb::EXPORT_TABLE_LADDER : pb::EXPORT_TABLE_TRIALS);
  request.set_format(options.format == "csv" ? pb::EXPORT_FORMAT_CSV : pb::EXPORT_FORMAT_JSONL);
  // --out (core/common/atomic_file.h): a file replaced whole, a link written through, a device or
  // FIFO written in place; a path it may not write is refused before the export (exit 2).
  std::optional<OutputFile> file;
  if (!options.out.empty()) {
    StatusOr<OutputFile> opened = OutputFile::Open(options.out);
    if (!opened.ok()) {
      std::cerr << "rung export: " << opened.status().message() << "\n";
      return opened.status().code() == StatusCode::kInvalidArgument ? kUsage : kFailure;
    }
    file.emplace(std::move(opened).value());
  }
  Status written;  // the first write error: the rest of the stream is read but not written
  auto write = [&](const std::string& data) {
    if (file) {
      if (written.ok()) written = file->Write(data);
    } else {
      std::cout << data;
    }
  };
  // JSON: the server's JSON lines become one array; chunks hold whole lines. The opening bracket
  // waits for the first line, so that a refused export writes nothing.
  const bool array = options.format == "json";
  bool first = true;
  std::unique_ptr<grpc::ClientContext> context = connection.StreamContext();
  std::unique_ptr<grpc::ClientReader<pb::ExportChunk>> stream = connection.user().Export(context.get(), request);
  pb::ExportChunk chunk;
  while (stream->Read(&chunk)) {
    if (!array) {
      write(chunk.data());
      continue;
    }
    size_t begin = 0;
    while (begin < chunk.data().size()) {
      size_t end = chunk.data().find('\n', begin);
      if (end == std::string::npos) end = chunk.data().size();
      if (end > begin) {
        write(std::string(first ? "[\n" : ",\n") + chunk.data().substr(begin, end - begin));
        first = false;
      }
      begin = end + 1;
    }
  }
  grpc::Status status = stream->Finish();
  if (!status.ok()) return ReportRpcError("export", status);
  if (array) write(first ? "[]\n" : "\n]\n");
  if (file) {
    if (written.ok()) written = file->Commit();
    if (!written.ok()) {
      std::cerr << "rung export: " << written.message() << "\n";  // the disk or device refused it: exit 1
      return kFailure;
    }
  }
  return kOk;
}

void AddExportCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* command = AddConnectedCommand<ExportOptions>(
      app, exit_code, "export",
      "Export a sweep: every trial's state, N, D, FLOPs, config, provenance and summaries (--table trials), or\n"
      "the ladder CSV `rung fit --from-csv` reads (--table ladder). CSV flattens config and provenance into\n"
      "config.<key> and provenance.<key> columns and summaries into summary.<name>.",
      options, RunExport);
  command->add_option("sweep", options->sweep_id, "Sweep id")->required();
  command->add_option("--format", options->format, "csv (default), json (one array) or jsonl (one object per line)")
      ->check(CLI::IsMember({"csv", "json", "jsonl"}));
  command->add_option("--table", options->table, "trials (default) or ladder")
      ->check(CLI::IsMember({"trials", "ladder"}));
  command->add_option("--out", options->out, "Write FILE: a file atomically (the old file or the whole new one, its mode kept), through a\n"
                                      "symbolic link to its target, a device or FIFO in place (/dev/stdout); a read-only file,\n"
                                      "folder or socket is refused (exit 2)")
      ->type_name("FILE");
}

}  // namespace

RUNG_CLI_COMMAND("export", kResults, AddExportCommand);

}  // namespace rung::cli
