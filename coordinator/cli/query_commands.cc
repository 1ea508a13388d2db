#include "coordinator/cli/query_commands.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <cctype>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"
#include "core/common/atomic_file.h"
#include "proto/config_value.h"
#include "proto/fit_report_proto.h"
#include "sweeps/fit/report_rows.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;
using nlohmann::json;

// ------------------------------------------------------------------------------------- results

struct ResultsOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  std::vector<std::string> group_by;
  std::string metric;
  std::vector<std::string> aggregations = {"mean", "std", "min", "count"};
  std::string summary = "final";
  std::vector<std::string> where;
};

int RunResults(CoordinatorConnection& connection, const ResultsOptions& options) {
  pb::QueryResultsRequest request;
  request.set_sweep_id(options.sweep_id);
  for (const std::string& key : options.group_by) request.add_group_by(key);
  request.set_metric(options.metric);
  static const std::map<std::string, pb::MetricSummary> summaries = {
      {"final", pb::METRIC_SUMMARY_FINAL}, {"best", pb::METRIC_SUMMARY_BEST}, {"last", pb::METRIC_SUMMARY_LAST}};
  request.set_summary(summaries.at(options.summary));
  static const std::map<std::string, pb::Aggregation> aggregations = {
      {"mean", pb::AGGREGATION_MEAN}, {"std", pb::AGGREGATION_STD},       {"min", pb::AGGREGATION_MIN},
      {"max", pb::AGGREGATION_MAX},   {"median", pb::AGGREGATION_MEDIAN}, {"count", pb::AGGREGATION_COUNT}};
  for (const std::string& name : options.aggregations) request.add_aggregations(aggregations.at(name));
  for (const std::string& condition : options.where) {
    const size_t equals = condition.find('=');
    if (equals == std::string::npos || equals == 0) {
      std::cerr << "rung results: --where '" << condition << "': expected KEY=VALUE (e.g. position.variant=rope)\n";
      return kUsage;
    }
    pb::ResultFilter* filter = request.add_filters();
    filter->set_key(condition.substr(0, equals));
    const std::string value = condition.substr(equals + 1);
    json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
    *filter->mutable_value() = wire::ToConfigValue(parsed.is_discarded() ? json(value) : parsed);  // rope -> "rope"
  }
  pb::QueryResultsResponse response;
  grpc::Status status = connection.user().QueryResults(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("results", status);

  std::vector<std::string> columns(response.group_by().begin(), response.group_by().end());
  for (const std::string& name : options.aggregations) columns.push_back(name);
  for (const char* column : {"trials", "paired_diff", "paired_sd", "pairs"}) columns.push_back(column);
  TextTable table(columns);
  for (const pb::ResultRow& row : response.rows()) {
    std::vector<std::string> cells;
    json object = json::object();
    for (int i = 0; i < row.group_values_size(); ++i) {
      json value = wire::FromConfigValue(row.group_values(i));
      cells.push_back(ValueText(value));
      object[response.group_by(i)] = value;
    }
    for (int i = 0; i < row.values_size(); ++i) {
      const bool count = response.aggregations(i) == pb::AGGREGATION_COUNT;
      // Undefined values (NaN: the sd of one value, anything of none) are blank, and null in JSON.
      cells.push_back(count ? std::to_string(static_cast<int64_t>(row.values(i))) : NumberOrBlank(row.values(i), 5));
      object[options.aggregations[static_cast<size_t>(i)]] =
          count ? json(static_cast<int64_t>(row.values(i))) : NumberOrNull(row.values(i));
    }
    // The sd of one pair is undefined too (the server sends 0 for it).
    const bool paired_sd = row.has_paired_difference_sd() && row.pairs() >= 2;
    cells.push_back(std::to_string(row.trials()));
    cells.push_back(row.has_paired_difference_mean() ? NumberOrBlank(row.paired_difference_mean(), 4) : "");
    cells.push_back(paired_sd ? NumberOrBlank(row.paired_difference_sd(), 4) : "");
    cells.push_back(std::to_string(row.pairs()));
    object["trials"] = row.trials();
    object["paired_diff"] = row.has_paired_difference_mean() ? NumberOrNull(row.paired_difference_mean()) : json();
    object["paired_sd"] = paired_sd ? NumberOrNull(row.paired_difference_sd()) : json();
    object["pairs"] = row.pairs();
    object["flops"] = row.flops();
    object["tokens"] = row.tokens();
    object["trial_ids"] = std::vector<int64_t>(row.trial_ids().begin(), row.trial_ids().end());
    table.AddRow(cells, object);
  }
  if (options.format == "table") {
    std::cout << "sweep " << options.sweep_id << ": " << response.metric() << " ("
              << options.summary << " value per trial); paired_diff: mean same-seed difference against the "
              << "baseline " << wire::FromConfigEntries(response.baseline()).dump() << " (sd over pairs)\n\n";
  }
  table.Print(std::cout, options.format);
  return kOk;
}

// -------------------------------------------------------------------------------------- export

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

// ---------------------------------------------------------------------------------------- fits

struct FitsOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  int64_t fit_id = 0;
};

// "summary=final bootstrap=200 seed=7 compute=nonembedding interval_level=0.95", then fixed_e, e_grid
// and tuned where set.
std::string FitOptionsText(const pb::FitOptions& options) {
  std::string summary = pb::MetricSummary_Name(options.summary());
  const std::string prefix = "METRIC_SUMMARY_";
  if (summary.rfind(prefix, 0) == 0) summary = summary.substr(prefix.size());
  for (char& c : summary) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string text = "summary=" + summary + " bootstrap=" + std::to_string(options.bootstrap()) +
                     " seed=" + std::to_string(options.seed()) + " compute=" + options.compute() +
                     " interval_level=" + Number(options.interval_level());
  if (options.has_fixed_e()) text += " fixed_e=" + Number(options.fixed_e());
  if (options.e_grid_size() > 0) {
    text += " e_grid=";
    for (int i = 0; i < options.e_grid_size(); ++i) text += (i ? "," : "") + Number(options.e_grid(i));
  }
  if (!options.tuned().empty()) text += " tuned=" + options.tuned();
  return text;
}

int RunFits(CoordinatorConnection& connection, const FitsOptions& options) {
  pb::ListFitsRequest request;
  request.set_sweep_id(options.sweep_id);
  request.set_fit_id(options.fit_id);
  pb::ListFitsResponse response;
  grpc::Status status = connection.user().ListFits(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("fits", status);
  if (options.fit_id > 0 && response.fits_size() == 1) {
    const pb::StoredFit& fit = response.fits(0);
    if (options.format == "table") {
      std::cout << "fit " << fit.fit_id() << " of sweep " << fit.sweep_id() << ", " << UtcTime(fit.created_at())
                << " by " << fit.actor() << ": " << fit.points_size() << " ladder points, options "
                << FitOptionsText(fit.options()) << "\n\n"
                << fit.report_text();
      return kOk;
    }
    if (options.format == "json") {
      json object = ToJson(fit);
      object.erase("report_text");
      std::vector<fit::ReportRow> rows;
      for (const pb::FitReportRow& row : fit.report()) rows.push_back(wire::FromProto(row));
      object["report"] = fit::ReportRowsToJson(rows);
      std::cout << object.dump(2) << "\n";
      return kOk;
    }
    TextTable points({"trial", "variant", "label", "compute", "loss", "seed"});
    for (const pb::FitPoint& point : fit.points()) {
      points.AddRow({std::to_string(point.trial_id()), point.variant(), point.label(), Number(point.compute(), 17),
                     Number(point.loss(), 17), std::to_string(point.seed())},
                    ToJson(point));
    }
    points.Print(std::cout, options.format);
    return kOk;
  }
  TextTable table({"fit", "created", "actor", "metric", "baseline", "variant_keys", "points", "options"});
  for (const pb::StoredFit& fit : response.fits()) {
    std::string keys;
    for (const std::string& key : fit.variant_keys()) keys += (keys.empty() ? "" : ",") + key;
    table.AddRow({std::to_string(fit.fit_id()), UtcTime(fit.created_at()), fit.actor(), fit.metric(), fit.baseline(),
                  keys, std::to_string(fit.points_size()), FitOptionsText(fit.options())},
                 ToJson(fit));
  }
  table.Print(std::cout, options.format);
  return kOk;
}

// ---------------------------------------------------------------------------------------- tune

struct TuneOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
};

int RunTune(CoordinatorConnection& connection, const TuneOptions& options) {
  pb::GetTuningRequest request;
  request.set_sweep_id(options.sweep_id);
  pb::GetTuningResponse response;
  grpc::Status status = connection.user().GetTuning(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("tune", status);
  PrintTuning(response, options.format, std::cout);
  return kOk;
}

// ---------------------------------------------------------------------------------------- logs

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

}  // namespace

void PrintTuning(const rung::v1::GetTuningResponse& response, const std::string& format, std::ostream& out) {
  TextTable table({"cell", "status", "tried (" + response.key() + "=metric)", "best", "bracketed", "next_centre",
                   "reason"});
  for (const pb::TuningCell& cell : response.cells()) {
    std::string name = cell.rung_label();
    for (const pb::ConfigEntry& entry : cell.cell()) {
      if (entry.key() == "rung") continue;
      name += (name.empty() ? "" : " ") + ValueText(wire::FromConfigValue(entry.value()));
    }
    std::string tried_text;
    json tried = json::array();
    for (const pb::TunedValue& value : cell.tried()) {
      tried_text += (tried_text.empty() ? "" : " ") + Number(value.value(), 3) + "=" +
                    (value.has_metric() ? Number(value.metric(), 4) : value.state());
      tried.push_back({{"value", value.value()},
                       {"loss", value.has_metric() ? json(value.metric()) : json(nullptr)},
                       {"state", value.state()}});
    }
    json row = {{"cell", wire::FromConfigEntries(cell.cell())},
                {"rung_label", cell.rung_label()},
                {"status", cell.status()},
                {"tried", tried},
                {"best", cell.has_best() ? json(cell.best()) : json(nullptr)},
                {"bracketed", cell.bracketed()},
                {"reason", cell.reason()},
                {"next_center", cell.has_next_center() ? json(cell.next_center()) : json(nullptr)}};
    // People read 3 digits; a script's CSV gets every digit (ExactNumber), blank where there is none.
    const bool csv = format == "csv";
    auto shown = [csv](bool has, double value) {
      return !has ? std::string(csv ? "" : "-") : csv ? ExactNumber(value) : Number(value, 3);
    };
    table.AddRow({name, cell.status(), tried_text.empty() ? "-" : tried_text, shown(cell.has_best(), cell.best()),
                  cell.bracketed() ? "yes" : "no", shown(cell.has_next_center(), cell.next_center()), cell.reason()},
                 row);
  }
  if (format == "table") {
    out << "search of " << response.key() << " over " << Number(response.anchor(), 4) << " x "
              << Number(response.ratio(), 6) << "^i: " << response.tuning() << ", " << response.cells_size()
              << " cells, at most " << response.worst_case_trials() << " trials\n";
  }
  table.Print(out, format);
}


void AddQueryCommands(CLI::App& app, int* exit_code) {
  {
    auto options = std::make_shared<ResultsOptions>();
    CLI::App* command = AddCommand<ResultsOptions>(
        app, exit_code, "results",
        "A sweep's results table: trials grouped by --group-by keys, one value of the metric per trial, aggregated\n"
        "per group (over seeds), with the mean same-seed difference against the sweep's baseline (paired_diff:\n"
        "each trial minus the baseline trial with the same rung, seed and other axis values).",
        options, RunResults);
    command->add_option("sweep", options->sweep_id, "Sweep id")->required();
    command
        ->add_option("--group-by", options->group_by,
                     "Keys, comma-separated: rung_label, rung, seed, a sweep axis (position.variant) or any dotted key "
                     "of the trial config (train.lr); none: one row per trial")
        ->delimiter(',')
        ->type_name("KEY,...");
    command->add_option("--metric", options->metric, "The metric (default: the sweep's, e.g. val_loss)")
        ->type_name("NAME");
    command->add_option("--agg", options->aggregations, "Aggregations, comma-separated: mean,std,min,max,median,count")
        ->delimiter(',')
        ->check(CLI::IsMember({"mean", "std", "min", "max", "median", "count"}))
        ->type_name("AGG,...");
    command
        ->add_option("--summary", options->summary,
                     "Which value stands for a trial: final (its final record; SUCCEEDED trials), best, last")
        ->check(CLI::IsMember({"final", "best", "last"}));
    command->add_option("--where", options->where, "Only trials with KEY=VALUE (VALUE as JSON, or a string)")
        ->type_name("KEY=VALUE");
  }
  {
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
  {
    auto options = std::make_shared<FitsOptions>();
    CLI::App* command = AddCommand<FitsOptions>(
        app, exit_code, "fits",
        "The fits `rung fit SWEEP` stored on the coordinator, newest first, with their inputs; --id N prints one\n"
        "fit's report (--format json: the report as JSON; --format csv: the ladder points it used).",
        options, RunFits);
    command->add_option("sweep", options->sweep_id, "Sweep id")->required();
    command->add_option("--id", options->fit_id, "One stored fit")->type_name("FIT");
  }
  {
    auto options = std::make_shared<TuneOptions>();
    CLI::App* command = AddCommand<TuneOptions>(
        app, exit_code, "tune",
        "A sweep's learning-rate search (its spec's tune block): per tuning cell the values tried with their\n"
        "metric and state, the best, whether it is bracketed and why, and the next rung's predicted centre.\n"
        "--format json: one object per cell (cell, rung_label, status, tried [{value, loss, state}], best,\n"
        "bracketed, reason, next_center).",
        options, RunTune);
    command->add_option("sweep", options->sweep_id, "Sweep id")->required();
  }
  {
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
}

}  // namespace rung::cli
