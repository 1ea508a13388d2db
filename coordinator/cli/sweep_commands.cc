#include "coordinator/cli/sweep_commands.h"

#include <cmath>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>
#include <chrono>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <unistd.h>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/full_disk_report.h"
#include "coordinator/cli/text_table.h"
#include "core/config/yaml_document.h"
#include "proto/config_value.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct CommandOptions {
  ConnectionOptions connection;
  std::string format = "table";
};

std::string Name(const std::string& enum_name, const std::string& prefix) {
  std::string text = enum_name.rfind(prefix, 0) == 0 ? enum_name.substr(prefix.size()) : enum_name;
  return text;
}
std::string SweepStateName(pb::SweepState state) { return Name(pb::SweepState_Name(state), "SWEEP_STATE_"); }
std::string TrialStateName(pb::TrialState state) { return Name(pb::TrialState_Name(state), "TRIAL_STATE_"); }

std::string Counts(const pb::TrialCounts& counts) {
  return std::to_string(counts.succeeded()) + "/" + std::to_string(counts.total()) + " done, " +
         std::to_string(counts.running() + counts.leased()) + " running, " + std::to_string(counts.pending()) +
         " pending, " + std::to_string(counts.failed()) + " failed" +
         (counts.early_stopped() > 0 ? ", " + std::to_string(counts.early_stopped()) + " stopped early" : "");
}

void PrintSweeps(const std::vector<pb::Sweep>& sweeps, const std::string& format) {
  TextTable table({"sweep", "name", "state", "trials", "succeeded", "running", "pending", "failed", "flops_6ND"});
  for (const pb::Sweep& sweep : sweeps) {
    const pb::TrialCounts& c = sweep.counts();
    table.AddRow({std::to_string(sweep.sweep_id()), sweep.name(), SweepStateName(sweep.state()),
                  std::to_string(c.total()), std::to_string(c.succeeded()), std::to_string(c.running() + c.leased()),
                  std::to_string(c.pending()), std::to_string(c.failed()),
                  format == "csv" ? ExactNumber(sweep.total_flops()) : Scientific(sweep.total_flops())},
                 ToJson(sweep));
  }
  table.Print(std::cout, format);
}

// position.variant = "rope", seed = 0 -> "position.variant=rope seed=0".
std::string CellText(const google::protobuf::RepeatedPtrField<pb::ConfigEntry>& assignments) {
  std::string text;
  for (const pb::ConfigEntry& entry : assignments) {
    text += (text.empty() ? "" : " ") + entry.key() + "=" + ValueText(wire::FromConfigValue(entry.value()));
  }
  return text;
}

void PrintTrials(const std::vector<pb::Trial>& trials, const std::string& format) {
  TextTable table({"trial", "index", "rung", "cell", "state", "attempt", "step", "metric", "worker", "reason"});
  for (const pb::Trial& trial : trials) {
    const std::string cell_text = CellText(trial.assignments());
    auto number = [&format](double value) { return format == "csv" ? ExactNumber(value) : Number(value); };
    const std::string metric = trial.has_final_metric()    ? number(trial.final_metric())
                               : trial.has_latest_metric() ? number(trial.latest_metric())
                                                           : "";
    // A dry run's trials have no id yet.
    table.AddRow({trial.trial_id() > 0 ? std::to_string(trial.trial_id()) : "", std::to_string(trial.index()),
                  trial.rung_label(), cell_text,
                  TrialStateName(trial.state()), std::to_string(trial.attempt()),
                  std::to_string(trial.latest_step()) + "/" + std::to_string(trial.total_steps()), metric,
                  trial.worker_id(), trial.state_reason()},
                 ToJson(trial));
  }
  table.Print(std::cout, format);
}

// `rung show --format csv`: the trial as one row, the columns of `rung trials` and then its
// identity, counts, checkpoint folder and resolved config (as JSON).
void PrintTrialCsv(const pb::Trial& trial) {
  TextTable table({"trial", "index", "rung", "cell", "state", "attempt", "step", "metric", "worker", "reason",
                   "identity", "parameters_nonembedding", "parameters_total", "tokens", "flops", "checkpoint_dir",
                   "config"});
  const std::string metric = trial.has_final_metric()    ? ExactNumber(trial.final_metric())
                             : trial.has_latest_metric() ? ExactNumber(trial.latest_metric())
                                                         : "";
  const nlohmann::json config = wire::FromConfigObject(trial.config());
  table.AddRow({std::to_string(trial.trial_id()), std::to_string(trial.index()), trial.rung_label(),
                CellText(trial.assignments()), TrialStateName(trial.state()), std::to_string(trial.attempt()),
                std::to_string(trial.latest_step()) + "/" + std::to_string(trial.total_steps()), metric,
                trial.worker_id(), trial.state_reason(), trial.identity(),
                std::to_string(trial.parameters_nonembedding()), std::to_string(trial.parameters_total()),
                std::to_string(trial.tokens()), ExactNumber(trial.flops()), trial.checkpoint_dir(), config.dump()});
  table.PrintCsv(std::cout);
}

struct SubmitOptions {
  ConnectionOptions connection;
  std::string format = "table";
  std::string spec_path;
  bool dry_run = false;
};

int RunSubmit(CoordinatorConnection& connection, const SubmitOptions& options) {
  // Bounded: a spec over the coordinator's size limit is refused here, before it is sent.
  StatusOr<std::string> text = ReadConfigText(options.spec_path);
  if (!text.ok()) {
    std::cerr << "rung submit: "
              << (text.status().code() == StatusCode::kNotFound ? "cannot read " + options.spec_path
                                                                : text.status().message())
              << "\n";
    return kUsage;
  }
  pb::SubmitSweepRequest request;
  request.set_spec_text(std::move(*text));
  request.set_spec_file_name(options.spec_path);
  request.set_dry_run(options.dry_run);
  pb::SubmitSweepResponse response;
  grpc::Status status = connection.user().SubmitSweep(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("submit", status);
  PrintSubmissionWarnings(response);
  if (options.format != "table") {
    std::cout << ToJson(response).dump(2) << "\n";
    return kOk;
  }
  std::map<std::string, int> outcomes;
  for (const pb::SubmittedCell& cell : response.cells()) {
    outcomes[Name(pb::SubmittedCell::Outcome_Name(cell.outcome()), "OUTCOME_")]++;
  }
  if (options.dry_run) {
    PrintTrials({response.trials().begin(), response.trials().end()}, "table");
    std::cout << "\ndry run: " << response.trial_count() << " trials, nothing stored\n";
    return kOk;
  }
  std::cout << (response.created() ? "submitted" : "resubmitted") << " sweep " << response.sweep_id() << ": "
            << response.trial_count() << " trials, " << response.new_trial_count() << " to run ("
            << Scientific(response.total_flops()) << " FLOPs)";
  for (const auto& [outcome, count] : outcomes) std::cout << "; " << count << " " << outcome;
  std::cout << "\n";
  for (const pb::SubmittedCell& cell : response.cells()) {
    if (cell.differences_size() == 0) continue;
    std::cout << "  cell " << cell.index() << " (" << cell.rung_label() << " "
              << wire::FromConfigEntries(cell.assignments()).dump() << ") changed:";
    for (const std::string& difference : cell.differences()) std::cout << " " << difference;
    std::cout << "\n";
  }
  return kOk;
}

struct WorkersOptions {
  ConnectionOptions connection;
  std::string format = "table";
  std::string release;        // --release: the worker whose quarantine to lift
  bool include_gone = false;  // --include-gone
};

struct SweepIdOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t sweep_id = 0;
  double watch_seconds = 0;
  std::vector<std::string> states;
  std::string reason;
  std::vector<int64_t> trial_ids;
};

struct TrialIdOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t trial_id = 0;
  std::vector<std::string> names;
};

}  // namespace

grpc::Status FetchTrials(CoordinatorConnection& connection, int64_t sweep_id, std::vector<pb::Trial>* trials) {
  pb::ListTrialsRequest request;
  request.set_sweep_id(sweep_id);
  do {
    pb::ListTrialsResponse response;
    grpc::Status status = connection.user().ListTrials(connection.Context().get(), request, &response);
    if (!status.ok()) return status;
    trials->insert(trials->end(), response.trials().begin(), response.trials().end());
    request.set_page_token(response.next_page_token());
  } while (!request.page_token().empty());
  return grpc::Status::OK;
}

double SearchFlopsToCome(CoordinatorConnection& connection, const pb::Sweep& sweep) {
  // A search whose sweep ended (CANCELLED, FAILED) adds nothing more.
  const bool ended = sweep.state() == pb::SWEEP_STATE_CANCELLED || sweep.state() == pb::SWEEP_STATE_FAILED;
  if (sweep.tuning() != "searching" || ended) return 0;
  pb::GetTuningRequest request;
  request.set_sweep_id(sweep.sweep_id());
  pb::GetTuningResponse tuning;
  if (!connection.user().GetTuning(connection.Context().get(), request, &tuning).ok()) return 0;
  return std::max(0.0, tuning.worst_case_flops() - sweep.total_flops());
}

SweepProgress MeasureProgress(const pb::Sweep& sweep, const std::vector<pb::Trial>& trials, double now_seconds,
                              double search_flops) {
  SweepProgress progress;
  progress.remaining_flops = search_flops;
  progress.finished = sweep.state() == pb::SWEEP_STATE_SUCCEEDED || sweep.state() == pb::SWEEP_STATE_FAILED ||
                      sweep.state() == pb::SWEEP_STATE_CANCELLED;
  const double end = progress.finished && sweep.has_finished_at() ? static_cast<double>(sweep.finished_at().seconds())
                                                                  : now_seconds;
  progress.elapsed_seconds = std::max(0.0, end - static_cast<double>(sweep.created_at().seconds()));
  for (const pb::Trial& trial : trials) {
    switch (trial.state()) {
      case pb::TRIAL_STATE_PENDING:
      case pb::TRIAL_STATE_LEASED:
      case pb::TRIAL_STATE_RUNNING:
      case pb::TRIAL_STATE_PREEMPTED:
      case pb::TRIAL_STATE_STALE:
        progress.remaining_flops += trial.flops();
        break;
      default:
        break;
    }
  }
  if (progress.elapsed_seconds > 0 && sweep.finished_flops() > 0) {
    progress.flops_per_second = sweep.finished_flops() / progress.elapsed_seconds;
    if (!progress.finished && progress.remaining_flops > 0) {
      progress.eta_seconds = progress.remaining_flops / *progress.flops_per_second;
    }
  }
  return progress;
}

// The progress table: per rung x variant, trials by state; then throughput and ETA from the
// compute finished since the sweep was created.
void PrintSweepStatus(const pb::Sweep& sweep, const std::vector<pb::Trial>& trials, double now_seconds,
                      const std::string& format, bool clear_screen, double search_flops) {
  struct Row {
    std::map<std::string, int64_t> states;
    std::string rung, variant;
  };
  std::map<std::pair<int64_t, std::string>, Row> rows;
  std::set<std::string> seen_states;
  for (const pb::Trial& trial : trials) {
    std::string variant;
    for (const pb::ConfigEntry& entry : trial.assignments()) {
      if (entry.key() == "position.variant" && entry.value().has_text()) variant = entry.value().text();
    }
    Row& row = rows[{trial.rung(), variant}];
    row.rung = trial.rung_label();
    row.variant = variant;
    row.states[TrialStateName(trial.state())]++;
    seen_states.insert(TrialStateName(trial.state()));
  }
  const SweepProgress progress = MeasureProgress(sweep, trials, now_seconds, search_flops);
  const nlohmann::json eta = progress.eta_seconds ? nlohmann::json(*progress.eta_seconds) : nlohmann::json();
  const nlohmann::json rate =
      progress.flops_per_second ? nlohmann::json(*progress.flops_per_second) : nlohmann::json();
  // PREEMPTED and STALE (a trial between attempts) only when some trial is in them.
  std::vector<std::string> states = {"PENDING", "LEASED", "RUNNING"};
  for (const char* state : {"PREEMPTED", "STALE"}) {
    if (seen_states.count(state) > 0) states.push_back(state);
  }
  for (const char* state : {"SUCCEEDED", "FAILED", "CANCELLED"}) states.push_back(state);
  if (seen_states.count("EARLY_STOPPED") > 0) states.push_back("EARLY_STOPPED");
  std::vector<std::string> columns = {"rung", "variant"};
  columns.insert(columns.end(), states.begin(), states.end());
  if (format == "csv") {  // the sweep's figures on every row, for a flat file
    for (const char* column : {"sweep", "sweep_state", "finished_flops", "remaining_flops", "elapsed_seconds",
                               "flops_per_second", "eta_seconds"}) {
      columns.push_back(column);
    }
  }
  TextTable table(columns);
  nlohmann::json json_rows = nlohmann::json::array();
  for (const auto& [key, row] : rows) {
    std::vector<std::string> cells = {row.rung, row.variant};
    nlohmann::json json_row = {{"rung", row.rung}, {"variant", row.variant}};
    for (const std::string& state : states) {
      auto it = row.states.find(state);
      const int64_t count = it == row.states.end() ? 0 : it->second;
      cells.push_back(count ? std::to_string(count) : format == "csv" ? "0" : "");
      json_row[state] = count;
    }
    if (format == "csv") {
      cells.push_back(std::to_string(sweep.sweep_id()));
      cells.push_back(SweepStateName(sweep.state()));
      cells.push_back(ExactNumber(sweep.finished_flops()));
      cells.push_back(ExactNumber(progress.remaining_flops));
      cells.push_back(ExactNumber(progress.elapsed_seconds));
      cells.push_back(progress.flops_per_second ? ExactNumber(*progress.flops_per_second) : "");
      cells.push_back(progress.eta_seconds ? ExactNumber(*progress.eta_seconds) : "");
    }
    json_rows.push_back(json_row);
    table.AddRow(cells, json_row);
  }
  if (format == "json") {
    const pb::TrialCounts& c = sweep.counts();
    const nlohmann::json counts = {{"total", c.total()},         {"pending", c.pending()},   {"leased", c.leased()},
                                   {"running", c.running()},     {"succeeded", c.succeeded()}, {"failed", c.failed()},
                                   {"preempted", c.preempted()}, {"stale", c.stale()},     {"cancelled", c.cancelled()},
                                   {"early_stopped", c.early_stopped()}};
    nlohmann::json object = {{"sweep_id", sweep.sweep_id()},
                             {"name", sweep.name()},
                             {"state", SweepStateName(sweep.state())},
                             {"state_reason", sweep.state_reason()},
                             {"counts", counts},
                             {"total_flops", sweep.total_flops()},
                             {"finished_flops", sweep.finished_flops()},
                             {"remaining_flops", progress.remaining_flops},
                             {"elapsed_seconds", progress.elapsed_seconds},
                             {"flops_per_second", rate},
                             {"eta_seconds", eta},
                             {"rows", json_rows}};
    std::cout << object.dump(2) << "\n" << std::flush;
    return;
  }
  if (format == "csv") {
    table.PrintCsv(std::cout);
    std::cout << std::flush;
    return;
  }
  if (clear_screen) std::cout << "\033[2J\033[H";
  std::cout << "sweep " << sweep.sweep_id() << " " << sweep.name() << ": " << SweepStateName(sweep.state())
            << (sweep.state_reason().empty() ? "" : " (" + sweep.state_reason() + ")") << "\n"
            << Counts(sweep.counts()) << "\n\n";
  table.PrintText(std::cout);
  std::cout << "\ncompute " << Scientific(sweep.finished_flops()) << " of " << Scientific(sweep.total_flops())
            << " FLOPs (6ND) in " << HumanDuration(progress.elapsed_seconds);
  if (progress.flops_per_second) std::cout << "; " << Scientific(*progress.flops_per_second, 2) << " FLOP/s";
  if (progress.eta_seconds) std::cout << ", ETA " << HumanDuration(*progress.eta_seconds);
  if (search_flops > 0) {
    std::cout << "\nthe learning-rate search is open: up to " << Scientific(search_flops)
              << " FLOPs more (its worst case, in the ETA; `rung tune " << sweep.sweep_id() << "`)";
  }
  std::cout << "\n" << std::flush;
}

grpc::Status FetchServerTime(CoordinatorConnection& connection, double* seconds, std::string* storage_warning) {
  pb::ServerInfo info;
  grpc::Status status = connection.user().GetServerInfo(connection.Context().get(), pb::GetServerInfoRequest(), &info);
  if (status.ok()) *seconds = static_cast<double>(info.server_time().seconds()) + info.server_time().nanos() * 1e-9;
  if (status.ok() && storage_warning != nullptr) *storage_warning = info.storage_warning();
  return status;
}

void AddSweepCommands(CLI::App& app, int* exit_code) {
  {
    auto options = std::make_shared<SubmitOptions>();
    CLI::App* command = AddCommand<SubmitOptions>(
        app, exit_code, "submit",
        "Submit a sweep spec to the coordinator (validated there; resubmitting skips cells already SUCCEEDED)",
        options, RunSubmit);
    command->add_option("spec", options->spec_path, "Sweep spec (YAML)")->required();
    command->add_flag("--dry-run", options->dry_run, "Validate and expand on the coordinator; store nothing");
  }
  {
    auto options = std::make_shared<SweepIdOptions>();
    AddCommand<SweepIdOptions>(app, exit_code, "sweeps", "List the coordinator's sweeps", options,
                               [](CoordinatorConnection& connection, const SweepIdOptions& o) {
                                 pb::ListSweepsRequest request;
                                 pb::ListSweepsResponse response;
                                 grpc::Status status =
                                     connection.user().ListSweeps(connection.Context().get(), request, &response);
                                 if (!status.ok()) return ReportRpcError("sweeps", status);
                                 PrintSweeps({response.sweeps().begin(), response.sweeps().end()}, o.format);
                                 return static_cast<int>(kOk);
                               });
  }
  {
    auto options = std::make_shared<SweepIdOptions>();
    CLI::App* command = AddCommand<SweepIdOptions>(
        app, exit_code, "status",
        "A sweep's progress: trials by state per rung and variant, throughput and ETA (--watch to follow); "
        "a full disk where the sweep writes is said on stderr (exit 1)",
        options,
        [](CoordinatorConnection& connection, const SweepIdOptions& o) {
          // Redraw in place only on a terminal; a file or pipe gets one plain table after another.
          const bool terminal = o.watch_seconds > 0 && o.format == "table" && ::isatty(STDOUT_FILENO) == 1;
          while (true) {
            double now = 0;
            std::string storage_warning;
            grpc::Status status = FetchServerTime(connection, &now, &storage_warning);
            if (!status.ok()) return ReportRpcError("status", status);
            pb::GetSweepRequest request;
            request.set_sweep_id(o.sweep_id);
            pb::Sweep sweep;
            status = connection.user().GetSweep(connection.Context().get(), request, &sweep);
            if (!status.ok()) return ReportRpcError("status", status);
            std::vector<pb::Trial> trials;
            status = FetchTrials(connection, o.sweep_id, &trials);
            if (!status.ok()) return ReportRpcError("status", status);
            PrintSweepStatus(sweep, trials, now, o.format, terminal, SearchFlopsToCome(connection, sweep));
            // A full disk anywhere the sweep writes: said on stderr, and (without --watch) exit 1.
            const std::vector<std::string> full_disks = FullDiskReports(connection, storage_warning, sweep, trials, 0);
            for (const std::string& report : full_disks) std::cerr << "rung status: " << report << "\n";
            if (o.watch_seconds <= 0 && !full_disks.empty()) return static_cast<int>(kFailure);
            const bool finished = sweep.state() == pb::SWEEP_STATE_SUCCEEDED || sweep.state() == pb::SWEEP_STATE_FAILED ||
                                  sweep.state() == pb::SWEEP_STATE_CANCELLED;
            if (o.watch_seconds <= 0 || finished) return static_cast<int>(finished && sweep.state() != pb::SWEEP_STATE_SUCCEEDED && o.watch_seconds > 0 ? kFailure : kOk);
            std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(o.watch_seconds * 1000)));
          }
        });
    command->add_option("sweep", options->sweep_id, "Sweep id")->required();
    command->add_option("--watch", options->watch_seconds,
                        "Refresh every this many seconds until the sweep finishes (exit 1 if it did not succeed)")
        ->expected(0, 1)
        ->default_str("2");
  }
  {
    auto options = std::make_shared<SweepIdOptions>();
    CLI::App* command = AddCommand<SweepIdOptions>(
        app, exit_code, "trials", "A sweep's trials (optionally in some states)", options,
        [](CoordinatorConnection& connection, const SweepIdOptions& o) {
          pb::ListTrialsRequest request;
          request.set_sweep_id(o.sweep_id);
          for (const std::string& state : o.states) {
            pb::TrialState value;
            if (!pb::TrialState_Parse("TRIAL_STATE_" + state, &value)) {
              std::cerr << "rung trials: unknown state '" << state
                        << "' (PENDING, LEASED, RUNNING, SUCCEEDED, FAILED, PREEMPTED, STALE, CANCELLED)\n";
              return static_cast<int>(kUsage);
            }
            request.add_states(value);
          }
          std::vector<pb::Trial> trials;
          do {
            pb::ListTrialsResponse response;
            grpc::Status status = connection.user().ListTrials(connection.Context().get(), request, &response);
            if (!status.ok()) return ReportRpcError("trials", status);
            trials.insert(trials.end(), response.trials().begin(), response.trials().end());
            request.set_page_token(response.next_page_token());
          } while (!request.page_token().empty());  // with a state filter, unlike FetchTrials
          PrintTrials(trials, o.format);
          return static_cast<int>(kOk);
        });
    command->add_option("sweep", options->sweep_id, "Sweep id")->required();
    command->add_option("--state", options->states, "Only trials in these states, comma-separated (e.g. failed,cancelled)")
        ->delimiter(',')
        ->type_name("STATE,...")
        ->transform([](std::string state) {
          for (char& c : state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          return state;
        });
  }
  {
    auto options = std::make_shared<TrialIdOptions>();
    CLI::App* command = AddCommand<TrialIdOptions>(
        app, exit_code, "show", "One trial in full: config, state, attempt", options,
        [](CoordinatorConnection& connection, const TrialIdOptions& o) {
          pb::GetTrialRequest request;
          request.set_trial_id(o.trial_id);
          pb::Trial trial;
          grpc::Status status = connection.user().GetTrial(connection.Context().get(), request, &trial);
          if (!status.ok()) return ReportRpcError("show", status);
          if (o.format == "json") {
            std::cout << ToJson(trial).dump(2) << "\n";
            return static_cast<int>(kOk);
          }
          if (o.format == "csv") {
            PrintTrialCsv(trial);
            return static_cast<int>(kOk);
          }
          PrintTrials({trial}, "table");
          if (trial.attempts_size() > 0) {
            TextTable attempts({"attempt", "state", "worker", "leased", "started", "ended", "batches", "reason"});
            for (const pb::TrialAttempt& attempt : trial.attempts()) {
              attempts.AddRow({std::to_string(attempt.attempt()), TrialStateName(attempt.state()), attempt.worker_id(),
                               UtcTime(attempt.leased_at()), UtcTime(attempt.started_at()), UtcTime(attempt.ended_at()),
                               std::to_string(attempt.metric_batches()), attempt.exit_reason()});
            }
            std::cout << "\n";
            attempts.PrintText(std::cout);
          }
          std::cout << "\nidentity " << trial.identity() << "\nN " << HumanCount(trial.parameters_nonembedding())
                    << " non-embedding, " << HumanCount(trial.parameters_total()) << " total; "
                    << HumanCount(trial.tokens()) << " tokens; " << Scientific(trial.flops()) << " FLOPs\n"
                    << "checkpoints " << trial.checkpoint_dir() << "\nconfig "
                    << wire::FromConfigObject(trial.config()).dump(2)
                    << "\n";
          return static_cast<int>(kOk);
        });
    command->add_option("trial", options->trial_id, "Trial id")->required();
  }
  {
    auto options = std::make_shared<TrialIdOptions>();
    CLI::App* command = AddCommand<TrialIdOptions>(
        app, exit_code, "metrics", "A trial's metric series (each step from the newest attempt that reported it)",
        options, [](CoordinatorConnection& connection, const TrialIdOptions& o) {
          pb::GetMetricsRequest request;
          request.set_trial_id(o.trial_id);
          for (const std::string& name : o.names) request.add_names(name);
          pb::GetMetricsResponse response;
          grpc::Status status = connection.user().GetMetrics(connection.Context().get(), request, &response);
          if (!status.ok()) return ReportRpcError("metrics", status);
          TextTable table({"name", "step", "value", "tokens", "flops", "wall_time", "attempt"});
          for (const pb::MetricSeries& series : response.series()) {
            for (const pb::MetricPoint& point : series.points()) {
              nlohmann::json row = {{"name", series.name()},   {"step", point.step()},   {"value", point.value()},
                                    {"tokens", point.tokens()}, {"flops", point.flops()}, {"wall_time", point.wall_time()},
                                    {"attempt", point.attempt()}};
              const bool exact = o.format == "csv";
              table.AddRow({series.name(), std::to_string(point.step()),
                            exact ? ExactNumber(point.value()) : Number(point.value(), 6), std::to_string(point.tokens()),
                            exact ? ExactNumber(point.flops()) : Scientific(point.flops()),
                            exact ? ExactNumber(point.wall_time()) : Number(point.wall_time()),
                            std::to_string(point.attempt())},
                           row);
            }
          }
          table.Print(std::cout, o.format);
          return static_cast<int>(kOk);
        });
    command->add_option("trial", options->trial_id, "Trial id")->required();
    command->add_option("--name", options->names, "Only these metrics, comma-separated (e.g. val_loss,train_loss)")
        ->delimiter(',')
        ->type_name("NAME,...");
  }
  // cancel, pause, resume: one sweep id, an optional reason, the sweep after the change.
  struct SweepAction {
    const char* name;
    const char* help;
    std::function<grpc::Status(CoordinatorConnection&, const SweepIdOptions&, pb::Sweep*)> call;
  };
  std::vector<SweepAction> actions = {
      {"cancel", "Cancel a sweep: every unfinished trial CANCELLED",
       [](CoordinatorConnection& c, const SweepIdOptions& o, pb::Sweep* out) {
         pb::CancelSweepRequest request;
         request.set_sweep_id(o.sweep_id);
         request.set_reason(o.reason);
         return c.user().CancelSweep(c.Context().get(), request, out);
       }},
      {"pause", "Pause a sweep: no new leases; running trials continue",
       [](CoordinatorConnection& c, const SweepIdOptions& o, pb::Sweep* out) {
         pb::PauseSweepRequest request;
         request.set_sweep_id(o.sweep_id);
         request.set_reason(o.reason);
         return c.user().PauseSweep(c.Context().get(), request, out);
       }},
      {"resume", "Resume a paused sweep",
       [](CoordinatorConnection& c, const SweepIdOptions& o, pb::Sweep* out) {
         pb::ResumeSweepRequest request;
         request.set_sweep_id(o.sweep_id);
         return c.user().ResumeSweep(c.Context().get(), request, out);
       }},
  };
  for (const SweepAction& action : actions) {
    auto options = std::make_shared<SweepIdOptions>();
    auto call = action.call;
    std::string name = action.name;
    CLI::App* command = AddCommand<SweepIdOptions>(
        app, exit_code, action.name, action.help, options,
        [call, name](CoordinatorConnection& connection, const SweepIdOptions& o) {
          pb::Sweep sweep;
          grpc::Status status = call(connection, o, &sweep);
          if (!status.ok()) return ReportRpcError(name, status);
          PrintSweeps({sweep}, o.format);
          return static_cast<int>(kOk);
        });
    command->add_option("sweep", options->sweep_id, "Sweep id")->required();
    if (name != "resume") command->add_option("--reason", options->reason, "Why (recorded with the event)");
  }
  {
    auto options = std::make_shared<SweepIdOptions>();
    CLI::App* command = AddCommand<SweepIdOptions>(
        app, exit_code, "retry", "Put FAILED trials back in the queue (all of a sweep's, or --trial ones)", options,
        [](CoordinatorConnection& connection, const SweepIdOptions& o) {
          pb::RetryTrialsRequest request;
          request.set_sweep_id(o.sweep_id);
          for (int64_t id : o.trial_ids) request.add_trial_ids(id);
          request.set_reason(o.reason);
          pb::RetryTrialsResponse response;
          grpc::Status status = connection.user().RetryTrials(connection.Context().get(), request, &response);
          if (!status.ok()) return ReportRpcError("retry", status);
          if (o.format != "table") {
            std::cout << ToJson(response).dump(2) << "\n";
          } else {
            std::cout << response.retried_trial_ids_size() << " trial(s) back to PENDING; sweep "
                      << SweepStateName(response.sweep().state()) << "\n";
          }
          return static_cast<int>(kOk);
        });
    command->add_option("sweep", options->sweep_id, "Sweep id")->required();
    command->add_option("--trial", options->trial_ids, "Only these trials, comma-separated")
        ->delimiter(',')
        ->type_name("TRIAL,...");
    command->add_option("--reason", options->reason, "Why (recorded with the event)");
  }
  {
    auto options = std::make_shared<TrialIdOptions>();
    CLI::App* command = AddCommand<TrialIdOptions>(
        app, exit_code, "params",
        "A trial's learned positional parameters (LeRoPE scales, AdaRoPE frequencies, tau, gamma, learned beta) "
        "and its frequencies per layer with the effective base per head",
        options, [](CoordinatorConnection& connection, const TrialIdOptions& o) {
          pb::GetLearnedParametersRequest request;
          request.add_trial_ids(o.trial_id);
          if (!o.names.empty()) request.set_name_prefix(o.names.front());
          pb::GetLearnedParametersResponse response;
          grpc::Status status = connection.user().GetLearnedParameters(connection.Context().get(), request, &response);
          if (!status.ok()) return ReportRpcError("params", status);
          TextTable table({"name", "kind", "shape", "values", "effective_base"});
          for (const pb::LearnedParameter& parameter : response.parameters()) {
            const pb::Tensor& tensor = parameter.tensor();
            std::string shape, values, bases;
            for (int64_t size : tensor.shape()) shape += (shape.empty() ? "" : "x") + std::to_string(size);
            for (int index = 0; index < tensor.values_size() && index < 8; ++index) {
              values += (index ? " " : "") + Number(tensor.values(index));
            }
            if (tensor.values_size() > 8) values += " ...";
            // Frequencies [G, d/2] per layer: effective base exp(-(4/(d-2)) sum_f ln theta_f) per row.
            const bool frequencies = (tensor.name().rfind("frequencies.", 0) == 0 || tensor.name().rfind("layer_", 0) == 0) && tensor.shape_size() == 2;
            if (frequencies && tensor.shape(1) > 1) {
              const int64_t pairs = tensor.shape(1);
              for (int64_t row = 0; row < tensor.shape(0); ++row) {
                double sum = 0;
                bool positive = true;
                for (int64_t f = 0; f < pairs; ++f) {
                  const double theta = tensor.values(static_cast<int>(row * pairs + f));
                  positive = positive && theta > 0;
                  sum += positive ? std::log(theta) : 0.0;
                }
                bases += (bases.empty() ? "" : " ") + (positive ? Number(std::exp(-(4.0 / (2.0 * pairs - 2.0)) * sum), 5) : "-");
              }
            }
            nlohmann::json row = ToJson(parameter);
            if (!bases.empty()) row["effective_base"] = bases;
            table.AddRow({tensor.name(), Name(pb::ParameterKind_Name(parameter.kind()), "PARAMETER_KIND_"), shape, values,
                          bases},
                         row);
          }
          table.Print(std::cout, o.format);
          return static_cast<int>(kOk);
        });
    command->add_option("trial", options->trial_id, "Trial id")->required();
    command->add_option("--name", options->names, "Only names starting with this prefix")->expected(1);
  }
  {
    auto options = std::make_shared<WorkersOptions>();
    CLI::App* command = AddCommand<WorkersOptions>(
        app, exit_code, "workers",
        "The workers registered with the coordinator, and why any is quarantined (--release ID lifts it)", options,
        [](CoordinatorConnection& connection, const WorkersOptions& o) {
          if (!o.release.empty()) {
            pb::ReleaseWorkerRequest request;
            request.set_worker_id(o.release);
            pb::Worker released;
            grpc::Status status = connection.user().ReleaseWorker(connection.Context().get(), request, &released);
            if (!status.ok()) return ReportRpcError("workers --release", status);
            if (o.format != "table") {
              std::cout << ToJson(released).dump(2) << "\n";
            } else {
              std::cout << "worker " << released.worker_id() << " released from quarantine: it leases again\n";
            }
            return static_cast<int>(kOk);
          }
          pb::ListWorkersRequest request;
          request.set_include_gone(o.include_gone);
          pb::ListWorkersResponse response;
          grpc::Status status = connection.user().ListWorkers(connection.Context().get(), request, &response);
          if (!status.ok()) return ReportRpcError("workers", status);
          TextTable table({"worker", "host", "cpu_slots", "gpus", "blas_kernel", "running", "gone", "quarantined"});
          std::vector<std::string> quarantines;
          for (const pb::Worker& worker : response.workers()) {
            const bool quarantined = !worker.quarantine_reason().empty();
            table.AddRow({worker.worker_id(), worker.host(), std::to_string(worker.cpu_slots()),
                          std::to_string(worker.gpus_size()), worker.blas_kernel(),
                          std::to_string(worker.running_trial_ids_size()),
                          worker.gone() ? "yes" : "", quarantined ? UtcTime(worker.quarantined_at()) : ""},
                         ToJson(worker));
            if (quarantined) quarantines.push_back(worker.worker_id() + " quarantined: " + worker.quarantine_reason());
          }
          table.Print(std::cout, o.format);
          if (o.format == "table") {
            for (const std::string& line : quarantines) std::cout << "\n" << line << "\n";
          }
          return static_cast<int>(kOk);
        });
    command->add_option("--release", options->release, "Lift this worker's quarantine, so that it leases again")
        ->type_name("WORKER");
    command->add_flag("--include-gone", options->include_gone, "Also workers not seen for longer than a lease");
  }
}

}  // namespace rung::cli
