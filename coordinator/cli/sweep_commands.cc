#include "coordinator/cli/sweep_commands.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>
#include <chrono>
#include <ctime>
#include <map>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/coordinator_connection.h"
#include "coordinator/cli/exit_codes.h"
#include "coordinator/cli/text_table.h"

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
         " pending, " + std::to_string(counts.failed()) + " failed";
}

void PrintSweeps(const std::vector<pb::Sweep>& sweeps, const std::string& format) {
  TextTable table({"sweep", "name", "state", "trials", "succeeded", "running", "pending", "failed", "flops_6ND"});
  for (const pb::Sweep& sweep : sweeps) {
    const pb::TrialCounts& c = sweep.counts();
    table.AddRow({std::to_string(sweep.sweep_id()), sweep.name(), SweepStateName(sweep.state()),
                  std::to_string(c.total()), std::to_string(c.succeeded()), std::to_string(c.running() + c.leased()),
                  std::to_string(c.pending()), std::to_string(c.failed()), Scientific(sweep.total_flops())},
                 ToJson(sweep));
  }
  table.Print(std::cout, format);
}

void PrintTrials(const std::vector<pb::Trial>& trials, const std::string& format) {
  TextTable table({"trial", "index", "rung", "cell", "state", "attempt", "step", "metric", "worker", "reason"});
  for (const pb::Trial& trial : trials) {
    nlohmann::json cell = nlohmann::json::parse(trial.assignments_json().empty() ? "{}" : trial.assignments_json(),
                                                nullptr, false);
    std::string cell_text;
    if (cell.is_object()) {
      for (auto it = cell.begin(); it != cell.end(); ++it) {
        cell_text += (cell_text.empty() ? "" : " ") + it.key() + "=" +
                     (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
      }
    }
    const std::string metric = trial.has_final_metric()    ? Number(trial.final_metric())
                               : trial.has_latest_metric() ? Number(trial.latest_metric())
                                                           : "";
    table.AddRow({std::to_string(trial.trial_id()), std::to_string(trial.index()), trial.rung_label(), cell_text,
                  TrialStateName(trial.state()), std::to_string(trial.attempt()),
                  std::to_string(trial.latest_step()) + "/" + std::to_string(trial.total_steps()), metric,
                  trial.worker_id(), trial.state_reason()},
                 ToJson(trial));
  }
  table.Print(std::cout, format);
}

struct SubmitOptions {
  ConnectionOptions connection;
  std::string format = "table";
  std::string spec_path;
  bool dry_run = false;
};

int RunSubmit(CoordinatorConnection& connection, const SubmitOptions& options) {
  std::ifstream stream(options.spec_path);
  if (!stream) {
    std::cerr << "rung submit: cannot read " << options.spec_path << "\n";
    return kUsage;
  }
  std::stringstream text;
  text << stream.rdbuf();
  pb::SubmitSweepRequest request;
  request.set_spec_text(text.str());
  request.set_spec_file_name(options.spec_path);
  request.set_dry_run(options.dry_run);
  pb::SubmitSweepResponse response;
  grpc::Status status = connection.user().SubmitSweep(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("submit", status);
  for (const pb::SpecDiagnostic& warning : response.warnings()) {
    std::cerr << warning.location() << ": warning: " << warning.path() << ": " << warning.message() << "\n";
  }
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
    std::cout << "  cell " << cell.index() << " (" << cell.rung_label() << " " << cell.assignments_json() << ") changed:";
    for (const std::string& difference : cell.differences()) std::cout << " " << difference;
    std::cout << "\n";
  }
  return kOk;
}

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

// The progress table: per rung x variant, trials by state; then throughput and ETA from the
// compute finished since the sweep was created.
void PrintSweepStatus(const pb::Sweep& sweep, const std::vector<pb::Trial>& trials, const std::string& format,
                      bool clear_screen) {
  struct Row {
    std::map<std::string, int64_t> states;
    std::string rung, variant;
  };
  std::map<std::pair<int64_t, std::string>, Row> rows;
  for (const pb::Trial& trial : trials) {
    nlohmann::json cell = nlohmann::json::parse(trial.assignments_json().empty() ? "{}" : trial.assignments_json(),
                                                nullptr, false);
    std::string variant = cell.is_object() && cell.contains("position.variant") && cell["position.variant"].is_string()
                              ? cell["position.variant"].get<std::string>()
                              : "";
    Row& row = rows[{trial.rung(), variant}];
    row.rung = trial.rung_label();
    row.variant = variant;
    row.states[TrialStateName(trial.state())]++;
  }
  const std::vector<std::string> states = {"PENDING", "LEASED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"};
  std::vector<std::string> columns = {"rung", "variant"};
  columns.insert(columns.end(), states.begin(), states.end());
  TextTable table(columns);
  for (const auto& [key, row] : rows) {
    std::vector<std::string> cells = {row.rung, row.variant};
    nlohmann::json json_row = {{"rung", row.rung}, {"variant", row.variant}};
    for (const std::string& state : states) {
      auto it = row.states.find(state);
      const int64_t count = it == row.states.end() ? 0 : it->second;
      cells.push_back(count ? std::to_string(count) : "");
      json_row[state] = count;
    }
    table.AddRow(cells, json_row);
  }
  if (format != "table") {
    table.Print(std::cout, format);
    return;
  }
  if (clear_screen) std::cout << "\033[2J\033[H";
  const double elapsed = static_cast<double>(std::time(nullptr) - sweep.created_at().seconds());
  const double rate = elapsed > 0 ? sweep.finished_flops() / elapsed : 0.0;
  std::cout << "sweep " << sweep.sweep_id() << " " << sweep.name() << ": " << SweepStateName(sweep.state())
            << (sweep.state_reason().empty() ? "" : " (" + sweep.state_reason() + ")") << "\n"
            << Counts(sweep.counts()) << "\n\n";
  table.PrintText(std::cout);
  std::cout << "\ncompute " << Scientific(sweep.finished_flops()) << " of " << Scientific(sweep.total_flops())
            << " FLOPs (6ND) in " << HumanDuration(elapsed);
  if (rate > 0 && sweep.total_flops() > sweep.finished_flops()) {
    std::cout << "; " << Scientific(rate, 2) << " FLOP/s, ETA " << HumanDuration((sweep.total_flops() - sweep.finished_flops()) / rate);
  }
  std::cout << "\n" << std::flush;
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
        "A sweep's progress: trials by state per rung and variant, throughput and ETA (--watch to follow)", options,
        [](CoordinatorConnection& connection, const SweepIdOptions& o) {
          while (true) {
            pb::GetSweepRequest request;
            request.set_sweep_id(o.sweep_id);
            pb::Sweep sweep;
            grpc::Status status = connection.user().GetSweep(connection.Context().get(), request, &sweep);
            if (!status.ok()) return ReportRpcError("status", status);
            std::vector<pb::Trial> trials;
            status = FetchTrials(connection, o.sweep_id, &trials);
            if (!status.ok()) return ReportRpcError("status", status);
            PrintSweepStatus(sweep, trials, o.format, o.watch_seconds > 0 && o.format == "table");
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
    command->add_option("--state", options->states, "Only trials in these states (e.g. FAILED; any case)")
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
          if (o.format != "table") {
            std::cout << ToJson(trial).dump(2) << "\n";
            return static_cast<int>(kOk);
          }
          PrintTrials({trial}, "table");
          std::cout << "\nidentity " << trial.identity() << "\nN " << HumanCount(trial.parameters_nonembedding())
                    << " non-embedding, " << HumanCount(trial.parameters_total()) << " total; "
                    << HumanCount(trial.tokens()) << " tokens; " << Scientific(trial.flops()) << " FLOPs\n"
                    << "checkpoints " << trial.checkpoint_dir() << "\nconfig "
                    << nlohmann::json::parse(trial.config_json().empty() ? "{}" : trial.config_json(), nullptr, false).dump(2)
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
              table.AddRow({series.name(), std::to_string(point.step()), Number(point.value(), 6),
                            std::to_string(point.tokens()), Scientific(point.flops()), Number(point.wall_time()),
                            std::to_string(point.attempt())},
                           row);
            }
          }
          table.Print(std::cout, o.format);
          return static_cast<int>(kOk);
        });
    command->add_option("trial", options->trial_id, "Trial id")->required();
    command->add_option("--name", options->names, "Only these metrics (e.g. val_loss)");
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
    command->add_option("--trial", options->trial_ids, "Only these trials");
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
    auto options = std::make_shared<SweepIdOptions>();
    AddCommand<SweepIdOptions>(
        app, exit_code, "workers", "The workers registered with the coordinator", options,
        [](CoordinatorConnection& connection, const SweepIdOptions& o) {
          pb::ListWorkersRequest request;
          pb::ListWorkersResponse response;
          grpc::Status status = connection.user().ListWorkers(connection.Context().get(), request, &response);
          if (!status.ok()) return ReportRpcError("workers", status);
          TextTable table({"worker", "host", "cpu_slots", "gpus", "running", "gone"});
          for (const pb::Worker& worker : response.workers()) {
            table.AddRow({worker.worker_id(), worker.host(), std::to_string(worker.cpu_slots()),
                          std::to_string(worker.gpus_size()), std::to_string(worker.running_trial_ids_size()),
                          worker.gone() ? "yes" : ""},
                         ToJson(worker));
          }
          table.Print(std::cout, o.format);
          return static_cast<int>(kOk);
        });
  }
}

}  // namespace rung::cli
