// coordinator/cli/commands/run_command.cc
//
// `rung run SPEC [--workers N] [--dashboard [--dashboard-listen HOST:PORT]]`: the embedded mode.
// Starts a coordinator on loopback with a fresh database, fresh tokens (0600 files) and an artifact
// root in a run directory, submits the spec, starts N local workers (each with its share of the CPU threads), shows live progress, and at the
// end prints the results (final metric per rung and variant over seeds) and, with a baseline and two
// or more rungs, the compute multipliers. Children die with it; Ctrl-C preempts the trials with a
// checkpoint and stops everything. --dashboard serves `rung dashboard` (read-only, the viewer token)
// on the run's coordinator until the run ends and prints its URL.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/full_disk_report.h"
#include "coordinator/cli/local_coordinator.h"
#include "coordinator/cli/sweep_fetch.h"
#include "coordinator/cli/sweep_status.h"
#include "coordinator/cli/precision_table.h"
#include "coordinator/cli/tuning_table.h"
#include "coordinator/cli/text_table.h"
#include "core/common/free_space.h"
#include "core/common/subprocess.h"
#include "core/common/write_error.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/law_format.h"
#include "sweeps/fit/law_report.h"
#include "sweeps/fit/report_format.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/tune/lr_search.h"

namespace rung::cli {
namespace {

namespace fs = std::filesystem;
namespace pb = rung::v1;

struct RunOptions {
  std::string spec_path;
  int workers = kRunDefaultWorkers;
  int cpus_per_worker = 0;  // 0: the machine's cores shared out (RunCpusPerWorker)
  bool layout_given = false;  // --workers or --cpus-per-worker on the command line
  std::string run_dir;
  double lease_seconds = 30;
  std::string trainer;  // "": rung-train beside this binary
  bool dashboard = false;                  // serve `rung dashboard` during the run
  std::string dashboard_listen = "127.0.0.1:8050";
};

// Every local worker is registered and quarantined (worker_quarantine.h): nothing will run. Their
// reasons, one line each, in `why`.
bool EveryWorkerQuarantined(CoordinatorConnection& client, int workers, std::string* why) {
  pb::ListWorkersResponse listed;
  if (!client.user().ListWorkers(client.Context().get(), pb::ListWorkersRequest(), &listed).ok()) return false;
  int quarantined = 0;
  why->clear();
  for (const pb::Worker& worker : listed.workers()) {
    if (worker.quarantine_reason().empty()) continue;
    ++quarantined;
    *why += "  " + worker.worker_id() + ": " + worker.quarantine_reason() + "\n";
  }
  return quarantined >= workers;
}

// How long `rung run` tries to store its pause on a full disk.
constexpr std::chrono::seconds kPauseTries{15};

// A worker of `rung run`, killed with it: stdout and stderr appended to `log_path`.
StatusOr<std::unique_ptr<Subprocess>> StartWorker(std::vector<std::string> argv, const std::string& log_path) {
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.stdout_to = Redirect::AppendTo(log_path);
  options.stderr_to = Redirect::AppendTo(log_path);
  options.die_with_parent = true;
  return Subprocess::Start(options);
}

std::atomic<int> g_interrupted{0};
void OnInterrupt(int signal) { g_interrupted.store(signal); }

std::string RunDirectoryFor(const ExpandedSweep& sweep) {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
  return (fs::path("rung-runs") / (sweep.spec.name + "-" + stamp)).string();
}

// Final metric per rung x variant over seeds; the ladder for the fits.
void PrintResults(const ExpandedSweep& expanded, const std::vector<pb::Trial>& trials, const std::string& metric) {
  struct Cell {
    std::string rung, variant;
    std::vector<double> values;
    double flops = 0;
  };
  std::map<std::pair<int64_t, std::string>, Cell> cells;
  std::map<std::string, const ExpandedTrial*> by_identity;
  for (const ExpandedTrial& trial : expanded.trials) by_identity[trial.identity] = &trial;
  fit::LadderResults ladder;
  ladder.source = expanded.spec.name;
  fit::LawRuns law_runs;  // the same runs with N and D, for an IsoFLOP grid's laws
  law_runs.source = "sweep " + expanded.spec.name;
  law_runs.metric = metric;
  bool seeded = true;
  for (const pb::Trial& trial : trials) {
    if (trial.state() != pb::TRIAL_STATE_SUCCEEDED || !trial.has_final_metric()) continue;
    // The trial's config by its identity: a spec resubmitted with more cells keeps the earlier trials'
    // indices, which need not be this expansion's. A trial this expansion does not hold (the spec lost
    // cells) is left out of the table.
    const auto expanded_trial = by_identity.find(trial.identity());
    if (expanded_trial == by_identity.end()) continue;
    const nlohmann::json& config = expanded_trial->second->config_json;
    const std::string variant = config.value("position", nlohmann::json::object()).value("variant", std::string());
    Cell& cell = cells[{trial.rung(), variant}];
    cell.rung = trial.rung_label();
    cell.variant = variant;
    cell.values.push_back(trial.final_metric());
    cell.flops = trial.flops();
    fit::LadderRun run;
    run.variant = variant;
    run.label = trial.rung_label();
    run.compute = trial.flops();
    run.loss = trial.final_metric();
    run.seed = config.value("seed", 0);
    ladder.runs.push_back(run);
    if (trial.tokens() > 0) {
      const double tokens = static_cast<double>(trial.tokens());
      law_runs.runs.push_back({variant, trial.flops() / (6.0 * tokens), tokens, trial.final_metric(), run.seed,
                               "trial " + std::to_string(trial.trial_id())});
    }
    seeded = seeded && config.contains("seed");
  }
  TextTable table({"rung", "variant", "runs", metric + " (mean)", "sd", "flops_6ND"});
  for (const auto& [key, cell] : cells) {
    double mean = 0, square = 0;
    for (double value : cell.values) mean += value / static_cast<double>(cell.values.size());
    for (double value : cell.values) square += (value - mean) * (value - mean);
    char mean_text[32], sd_text[32] = "";  // the sd of one run is undefined: blank
    std::snprintf(mean_text, sizeof(mean_text), "%.4f", mean);
    if (cell.values.size() > 1) {
      std::snprintf(sd_text, sizeof(sd_text), "%.4f", std::sqrt(square / static_cast<double>(cell.values.size() - 1)));
    }
    table.AddRow({cell.rung, cell.variant, std::to_string(cell.values.size()), mean_text, sd_text, Scientific(cell.flops)});
  }
  std::cout << "\nresults (" << metric << ", SUCCEEDED trials)\n\n";
  table.PrintText(std::cout);

  const nlohmann::json& baseline = expanded.spec.baseline;
  if (metric != "val_loss" || !baseline.is_object() || !baseline.contains("position.variant") ||
      expanded.spec.ladder.rungs.size() < 2) {
    return;
  }
  if (!expanded.spec.ladder.isoflop_budgets.empty()) {
    // An IsoFLOP grid's rungs share a few budgets rather than climb in compute: its summary is the
    // scaling laws (as `rung laws` prints them); `rung fit` reads the multipliers along its frontier.
    fit::LawOptions options;
    options.baseline = baseline["position.variant"].get<std::string>();
    StatusOr<fit::LawReport> laws = fit::FitLaws(law_runs, options);
    if (!laws.ok()) {
      std::cout << "\nscaling laws: not fitted (" << laws.status().message() << ")\n";
      return;
    }
    std::cout << "\nscaling laws (rung laws; the multipliers measured along the grid's frontier: rung fit)\n\n"
              << fit::FormatLawTable(*laws);
    return;
  }
  fit::MultiplierOptions options;
  options.baseline = baseline["position.variant"].get<std::string>();
  options.bootstrap = 200;
  options.shared_e = false;  // the summary shows the primary estimator; `rung fit` has the rest
  options.free_e = false;
  options.e_sensitivity = false;
  StatusOr<fit::MultiplierReport> report = fit::ComputeMultipliers(ladder, options);
  if (!report.ok()) {
    std::cout << "\ncompute multipliers: not computed (" << report.status().message() << ")\n";
    return;
  }
  std::cout << "\ncompute multipliers against " << options.baseline << " (rung fit)\n\n"
            << fit::FormatReportTable(report.value());
}

// The coordinator's fit of the sweep (as `rung fit` prints it, stored), titled "compute multipliers
// <what>".
std::string CoordinatorFit(CoordinatorConnection& client, int64_t sweep_id, const std::string& what) {
  pb::FitRequest fit_request;
  fit_request.set_sweep_id(sweep_id);
  fit_request.set_bootstrap(200);
  pb::FitResponse fit;
  grpc::Status status = client.user().Fit(client.StreamContext().get(), fit_request, &fit);
  if (!status.ok()) return "\ncompute multipliers " + what + ": not computed (" + status.error_message() + ")\n";
  return "\ncompute multipliers " + what + " (rung fit " + std::to_string(sweep_id) + ", stored as fit " +
         std::to_string(fit.fit_id()) + ")\n\n" + fit.stored().report_text();
}

// A tuned sweep's summary comes from the coordinator, which knows each cell's best value: its search
// (as `rung tune` prints it) and the fit of the tuned points (as `rung fit` prints it). Fetched while
// the coordinator runs.
std::string TunedSummary(CoordinatorConnection& client, int64_t sweep_id) {
  std::ostringstream out;
  pb::GetTuningRequest tuning_request;
  tuning_request.set_sweep_id(sweep_id);
  pb::GetTuningResponse tuning;
  grpc::Status status = client.user().GetTuning(client.Context().get(), tuning_request, &tuning);
  if (!status.ok()) return "\nthe learning-rate search: not read (" + status.error_message() + ")\n";
  out << "\nthe learning-rate search (rung tune " << sweep_id << ")\n\n";
  PrintTuning(tuning, "table", out);
  out << CoordinatorFit(client, sweep_id, "at the tuned points");
  return out.str();
}

// A precision-aimed sweep's summary comes from the coordinator, whose ladder holds the seeds the aim
// added (the spec's expansion does not): the fit of every run (as `rung fit` prints it; a tuned
// sweep's TunedSummary has it already, `with_fit` false) and the aim as it closed (as `rung
// precision` prints it). Fetched while the coordinator runs.
std::string PrecisionSummary(CoordinatorConnection& client, int64_t sweep_id, bool with_fit) {
  std::ostringstream out;
  if (with_fit) out << CoordinatorFit(client, sweep_id, "of every run, the aim's seeds included");
  pb::GetPrecisionRequest request;
  request.set_sweep_id(sweep_id);
  pb::GetPrecisionResponse precision;
  grpc::Status status = client.user().GetPrecision(client.Context().get(), request, &precision);
  if (!status.ok()) return out.str() + "\nthe precision aim: not read (" + status.error_message() + ")\n";
  out << "\nthe precision aim (rung precision " << sweep_id << ")\n\n";
  PrintPrecision(precision, "table", out);
  return out.str();
}

// The spec, expanded under the started coordinator's default limit: errors name file:line:col before anything starts.
StatusOr<ExpandedSweep> LoadRunSpec(const std::string& spec_path) {
  return LoadSweepSpec(spec_path, ExpansionLimits{kDefaultMaxTrials,
                                                  "rung-coordinator --max-trials-per-submission N and "
                                                  "rung submit; rung run keeps the default"});
}

// The text of the spec file as the coordinator is sent it ("" when it does not read).
std::string SpecFileText(const std::string& spec_path) {
  std::ifstream spec_stream(spec_path);
  std::stringstream spec_text;
  spec_text << spec_stream.rdbuf();
  return spec_text.str();
}

// Creates the run directory: kOk, or kFailure with the reason on stderr.
int CreateRunDirectory(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    std::cerr << "rung run: cannot create " << dir << ": " << error.message() << "\n";
    return kFailure;
  }
  return kOk;
}

// Says what the run starts in `dir`: kOk, or kUsage (reason on stderr) when the search cannot be planned.
int AnnounceRun(const ExpandedSweep& expanded, const std::string& dir) {
  if (!expanded.spec.tune.set) {
    std::cout << "rung run: " << expanded.trials.size() << " trials of " << expanded.spec.name << " in " << dir
              << "\n";
    return kOk;
  }
  StatusOr<TuningPlan> plan = PlanTuning(expanded, {});
  if (!plan.ok()) {
    std::cerr << "rung run: " << plan.status().message() << "\n";
    return kUsage;
  }
  std::cout << "rung run: " << expanded.spec.name << " searches " << expanded.spec.tune.key << " in "
            << plan->cells.size() << " tuning cells: " << plan->trials.size() << " trials to start, at most "
            << plan->worst_case_trials << ", in " << dir << "\n";
  return kOk;
}

// What `rung run` started, in this order so that an early return kills the dashboard first, the coordinator last.
struct EmbeddedRun {
  LocalCoordinator coordinator;
  std::unique_ptr<CoordinatorConnection> connection;
  std::vector<std::unique_ptr<Subprocess>> workers;
  std::unique_ptr<Subprocess> dashboard;
};

// Starts the coordinator on loopback and connects with the user token: kOk, or the exit code (reason on stderr).
int StartRunCoordinator(const RunOptions& options, const RunDirectory& run, EmbeddedRun* embedded) {
  StatusOr<LocalCoordinator> coordinator = StartLocalCoordinator(run, "127.0.0.1:0", options.lease_seconds);
  if (!coordinator.ok()) {
    std::cerr << "rung run: " << coordinator.status().message() << "\n";
    return kFailure;
  }
  embedded->coordinator = std::move(coordinator).value();
  ConnectionOptions connection_options;
  connection_options.address = embedded->coordinator.address;
  connection_options.token_file = run.user_token();
  StatusOr<std::unique_ptr<CoordinatorConnection>> connection = CoordinatorConnection::Open(connection_options);
  if (!connection.ok()) return ReportConnectionError("run", connection.status());
  embedded->connection = std::move(connection).value();
  return kOk;
}

// Whether an earlier `rung run` paused a sweep named `name` for a full disk (false when the coordinator does not say).
bool PausedForFullDisk(CoordinatorConnection& client, const std::string& name) {
  pb::ListSweepsRequest list;
  list.set_name(name);
  list.add_states(pb::SWEEP_STATE_PAUSED);
  pb::ListSweepsResponse listed;
  bool paused_for_full_disk = false;
  if (client.user().ListSweeps(client.Context().get(), list, &listed).ok()) {
    for (const pb::Sweep& earlier : listed.sweeps()) {
      paused_for_full_disk =
          paused_for_full_disk || earlier.state_reason().find(kFullDiskPauseMark) != std::string::npos;
    }
  }
  return paused_for_full_disk;
}

// Submits the spec, resuming it when a full disk paused it: kOk with `*sweep_id`, or the exit code (reason on stderr).
int SubmitRunSpec(CoordinatorConnection& client, const std::string& spec_path, const std::string& spec_text,
                  const std::string& name, int64_t* sweep_id) {
  pb::SubmitSweepRequest submit;
  submit.set_spec_text(spec_text);
  submit.set_spec_file_name(spec_path);
  // A sweep an earlier `rung run` paused for a full disk goes on: running the command again is how
  // the user says there is room now (a pause of the user's own stays). Asked before the submission,
  // which records a reason of its own.
  const bool paused_for_full_disk = PausedForFullDisk(client, name);
  pb::SubmitSweepResponse submitted;
  grpc::Status status = client.user().SubmitSweep(client.Context().get(), submit, &submitted);
  if (!status.ok()) return ReportRpcError("run", status);
  PrintSubmissionWarnings(submitted);
  *sweep_id = submitted.sweep_id();
  if (!paused_for_full_disk) return kOk;
  pb::ResumeSweepRequest resume;
  resume.set_sweep_id(submitted.sweep_id());
  pb::Sweep resumed;
  status = client.user().ResumeSweep(client.Context().get(), resume, &resumed);
  if (!status.ok()) return ReportRpcError("run", status);
  std::cout << "rung run: sweep " << submitted.sweep_id() << " was paused for a full disk: resumed\n";
  return kOk;
}

// Starts the workers, each in worker-<i> of the run directory with its log beside: kOk, or kFailure (reason on stderr).
int StartRunWorkers(const RunOptions& options, const RunDirectory& run, const std::string& address,
                    std::vector<std::unique_ptr<Subprocess>>* workers) {
  const std::string bin = ExecutableDirectory();
  const int cpus = RunCpusPerWorker(options.workers, options.cpus_per_worker);
  for (int index = 0; index < options.workers; ++index) {
    const std::string work_dir = (fs::path(run.dir) / ("worker-" + std::to_string(index))).string();
    std::error_code error;
    fs::create_directories(work_dir, error);
    StatusOr<std::unique_ptr<Subprocess>> worker = StartWorker(
        {bin + "/rung-worker", "--coordinator", address, "--worker-token-file", run.worker_token(), "--cpus",
         std::to_string(cpus), "--worker-id", "local-" + std::to_string(index), "--work-dir", work_dir, "--trainer",
         options.trainer.empty() ? bin + "/rung-train" : options.trainer},
        work_dir + ".log");
    if (!worker.ok()) {
      std::cerr << "rung run: " << worker.status().message() << "\n";
      return kFailure;
    }
    workers->push_back(std::move(worker).value());
  }
  std::cout << "rung run: coordinator " << address << ", " << options.workers << " worker(s) x " << cpus
            << " thread(s); logs in " << run.dir << "\n";
  return kOk;
}

// With --dashboard, the `rung dashboard` started (viewer token), its URL printed; null without it or when it fails.
std::unique_ptr<Subprocess> StartRunDashboard(const RunOptions& options, const RunDirectory& run,
                                              const std::string& address) {
  if (!options.dashboard) return nullptr;
  StatusOr<LocalDashboard> started =
      StartLocalDashboard(address, run.viewer_token(), options.dashboard_listen, run.Path("dashboard.log"));
  if (!started.ok()) {
    std::cerr << "rung run: the dashboard did not start (the run goes on): " << started.status().message() << "\n";
    return nullptr;
  }
  std::cout << "rung run: dashboard at " << started->url << " (until the run ends; then rung serve " << run.dir
            << " --dashboard)" << std::endl;
  return std::move(started->process);
}

// Where watching a sweep ended: its last state and trials, and whether a full disk stopped it.
struct SweepWatch {
  pb::Sweep sweep;
  std::vector<pb::Trial> trials;
  bool out_of_space = false;
};

// Reads the sweep and its trials into `watch`: kOk, or the exit code (reason on stderr).
int FetchSweepProgress(CoordinatorConnection& client, int64_t sweep_id, SweepWatch* watch) {
  pb::GetSweepRequest get;
  get.set_sweep_id(sweep_id);
  grpc::Status status = client.user().GetSweep(client.Context().get(), get, &watch->sweep);
  if (!status.ok()) return ReportRpcError("run", status);
  watch->trials.clear();
  status = FetchTrials(client, sweep_id, &watch->trials);
  if (!status.ok()) return ReportRpcError("run", status);
  return kOk;
}

// Prints the sweep's status table at the coordinator's time (the local clock when it does not answer).
void PrintRunProgress(CoordinatorConnection& client, const SweepWatch& watch, bool terminal) {
  double server_now = static_cast<double>(std::time(nullptr));
  (void)FetchServerTime(client, &server_now);
  PrintSweepStatus(watch.sweep, watch.trials, server_now, "table", terminal, SearchFlopsToCome(client, watch.sweep));
}

// Whether any of the workers still runs.
bool AnyWorkerRunning(const std::vector<std::unique_ptr<Subprocess>>& workers) {
  bool any_worker = false;
  for (auto& worker : workers) any_worker = any_worker || worker->Running();
  return any_worker;
}

// What is full: the workers' reports since `run_started`, else the run folder `dir` when low on space; "" if nothing.
std::string RunFullDiskReport(CoordinatorConnection& client, const std::vector<pb::Trial>& trials,
                              double run_started, const std::string& dir) {
  std::string full = WorkerFullDiskReport(client, trials, static_cast<int64_t>(run_started));
  // The run's own folder (database, checkpoints, logs): a full one stops everything, the
  // coordinator's writes too, so it is measured here rather than asked.
  if (const StatusOr<uint64_t> free = FreeBytesAt(dir); full.empty() && free.ok() && *free < kFullDiskFreeBytes) {
    full = std::string(kNoSpaceMessage) + dir + " (" + HumanBytes(*free) + " free)";
  }
  return full;
}

// Pauses the sweep for the full disk `full` (tried for kPauseTries) and says on stderr how to go on.
void PauseForFullDisk(CoordinatorConnection& client, int64_t sweep_id, const std::string& full) {
  pb::PauseSweepRequest pause;
  pause.set_sweep_id(sweep_id);
  pause.set_reason(full + kFullDiskPauseMark);
  pb::Sweep paused;
  // The pause is a write on the same full disk: it gets room once the trainer whose checkpoint
  // did not fit has removed its partial file, so it is tried for a while.
  bool was_paused = false;
  for (auto until = std::chrono::steady_clock::now() + kPauseTries; !was_paused;) {
    was_paused = client.user().PauseSweep(client.Context().get(), pause, &paused).ok();
    if (was_paused || std::chrono::steady_clock::now() > until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::cerr << "rung run: " << full << "\nrung run: "
            << (was_paused ? "the sweep is paused" : "stopped (the coordinator could not store a pause either)")
            << "; free space there and run the same command again: every acknowledged step is kept and "
            << "the trials resume from their checkpoints\n";
}

// Shows progress until the sweep ends or the run must stop: kOk with the end in `watch`, or a failed call's exit code.
int WatchRunToEnd(const RunOptions& options, const std::string& dir, CoordinatorConnection& client, int64_t sweep_id,
                  const std::vector<std::unique_ptr<Subprocess>>& workers, SweepWatch* watch) {
  ::signal(SIGINT, OnInterrupt);
  ::signal(SIGTERM, OnInterrupt);
  const bool terminal = ::isatty(STDOUT_FILENO) != 0;
  auto last_print = std::chrono::steady_clock::now() - std::chrono::hours(1);
  auto last_space_check = last_print;
  double run_started = static_cast<double>(std::time(nullptr));
  (void)FetchServerTime(client, &run_started);
  while (true) {
    if (int code = FetchSweepProgress(client, sweep_id, watch); code != kOk) return code;
    const auto now = std::chrono::steady_clock::now();
    if (terminal || now - last_print > std::chrono::seconds(15) || SweepFinished(watch->sweep)) {
      PrintRunProgress(client, *watch, terminal);
      last_print = now;
    }
    if (SweepFinished(watch->sweep) || g_interrupted.load() != 0) break;
    if (!AnyWorkerRunning(workers)) {
      std::cerr << "rung run: every worker exited; see " << dir << "/worker-*.log\n";
      break;
    }
    if (now - last_space_check > std::chrono::seconds(2)) {
      last_space_check = now;
      if (const std::string full = RunFullDiskReport(client, watch->trials, run_started, dir); !full.empty()) {
        PauseForFullDisk(client, sweep_id, full);
        watch->out_of_space = true;
        break;
      }
    }
    if (std::string why; EveryWorkerQuarantined(client, options.workers, &why)) {
      std::cerr << "rung run: every worker is quarantined, so nothing will run:\n"
                << why << "fix what they name (their logs: " << dir
                << "/worker-*.log) and run the spec again: finished cells are skipped\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(terminal ? 1000 : 500));
  }
  return kOk;
}

// Stops the children: workers first (SIGTERM: trials checkpoint, reported PREEMPTED), then dashboard and coordinator.
void StopEmbeddedRun(EmbeddedRun& embedded, bool out_of_space) {
  // Their exits change nothing now: what they did is in the database and their logs.
  // On a full disk nothing more can be stored (the coordinator's database is there too): a short
  // grace, then the workers are killed; what was acknowledged is in the database already.
  const auto worker_grace = out_of_space ? std::chrono::seconds(10) : std::chrono::seconds(60);
  for (auto& worker : embedded.workers) worker->Signal(SIGTERM).IgnoreError();
  for (auto& worker : embedded.workers) worker->Stop(SIGTERM, worker_grace).IgnoreError();
  if (embedded.dashboard) embedded.dashboard->Stop(SIGTERM, std::chrono::seconds(10)).IgnoreError();
  embedded.coordinator.process->Stop(SIGTERM, std::chrono::seconds(10)).IgnoreError();
}

// How a stopped run ends: kFailure if interrupted or out of space, else the results, and kOk if the sweep succeeded.
int ReportRunOutcome(const ExpandedSweep& expanded, const SweepWatch& watch, const std::string& tuned_summary,
                     const std::string& dir) {
  if (g_interrupted.load() != 0) {
    std::cout << "rung run: interrupted; the database and checkpoints are in " << dir << " (rung serve " << dir
              << " serves them)\n";
    return kFailure;
  }
  if (watch.out_of_space) return kFailure;
  const pb::Sweep& sweep = watch.sweep;
  if (expanded.spec.tune.set || expanded.spec.precision.set) {
    std::cout << tuned_summary;  // the coordinator's: its ladder holds the trials the search or aim added
  } else {
    PrintResults(expanded, watch.trials, sweep.metric_name().empty() ? "val_loss" : sweep.metric_name());
  }
  std::cout << "\nrung run: sweep " << (sweep.state() == pb::SWEEP_STATE_SUCCEEDED ? "SUCCEEDED" : "did not succeed")
            << "; everything is in " << dir << "\n"
            << "rung run: to query it again (rung results, fit, plot, diag): rung serve " << dir << "\n";
  return sweep.state() == pb::SWEEP_STATE_SUCCEEDED ? kOk : kFailure;
}

// Whether `workers` local workers of `slots` CPU slots each can take `trial`: one worker holding every
// rank's CPUs, or one rank on each of resources.world_size workers (the coordinator's two ways to place
// a gang). rung run's workers have no GPUs.
bool LayoutTakes(const ExpandedTrial& trial, int workers, int slots) {
  const ResourcesConfig& resources = trial.config.resources;
  if (resources.gpus > 0) return false;
  return resources.cpus * resources.world_size <= slots || (resources.cpus <= slots && resources.world_size <= workers);
}

// The worker layout fitted to the trials' resources: where the default layout cannot take a trial,
// fewer and wider workers (each as wide as the widest rank, as many as the cores hold) when that takes
// every trial; else kUsage, naming the trial and what to change on stderr, before anything starts. A
// trial no worker can take would stay PENDING for ever.
int FitRunLayout(const ExpandedSweep& expanded, RunOptions* options) {
  const int cpus = RunCpusPerWorker(options->workers, options->cpus_per_worker);
  const ExpandedTrial* refused = nullptr;
  int64_t widest = 1;
  for (const ExpandedTrial& trial : expanded.trials) {
    widest = std::max(widest, trial.config.resources.cpus);
    if (refused == nullptr && !LayoutTakes(trial, options->workers, cpus)) refused = &trial;
  }
  if (refused == nullptr) return kOk;
  const ResourcesConfig& resources = refused->config.resources;
  const std::string what = "trial " + std::to_string(refused->index) + " needs resources.cpus " +
                           std::to_string(resources.cpus) +
                           (resources.world_size > 1 ? " on each of " + std::to_string(resources.world_size) + " ranks" : "") +
                           (resources.gpus > 0 ? " and " + std::to_string(resources.gpus) + " GPU(s)" : "");
  if (resources.gpus > 0) {
    std::cerr << "rung run: " << what << ", but rung run's workers have no GPUs: run rung-coordinator and "
              << "rung-worker --gpus N (deploy/README.md), or set resources.gpus 0\n";
    return kUsage;
  }
  const int cores = RunCpusPerWorker(1, 0);
  if (!options->layout_given && widest <= cores) {
    const int workers = std::max(1, cores / static_cast<int>(widest));
    const int slots = cores / workers;
    bool takes_all = true;
    for (const ExpandedTrial& trial : expanded.trials) takes_all = takes_all && LayoutTakes(trial, workers, slots);
    if (takes_all) {
      std::cout << "rung run: " << what << ": " << workers << " worker(s) of " << slots << " CPU(s) instead of "
                << options->workers << " of " << cpus << "\n";
      options->workers = workers;
      options->cpus_per_worker = slots;
      return kOk;
    }
  }
  const int64_t total = resources.cpus * resources.world_size;
  std::cerr << "rung run: " << what << ", but "
            << (options->layout_given ? "--workers " + std::to_string(options->workers) + " of " + std::to_string(cpus) +
                                            " CPU slot(s) cannot take it"
                                      : "this machine's " + std::to_string(cores) + " core(s) cannot take it")
            << ": give --cpus-per-worker " << total << " (oversubscribed where the machine has fewer cores)"
            << (resources.world_size > 1 ? " or --workers " + std::to_string(resources.world_size) + " --cpus-per-worker " +
                                               std::to_string(resources.cpus)
                                         : "")
            << ", or lower resources." << (resources.world_size > 1 ? "cpus or resources.world_size" : "cpus")
            << " in the spec\n";
  return kUsage;
}

// `rung run SPEC`: the run from start to results; the exit code (kOk only when the sweep succeeded).
int RunEmbedded(RunOptions options) {
  StatusOr<ExpandedSweep> expanded = LoadRunSpec(options.spec_path);
  if (!expanded.ok()) {
    std::cerr << "rung run: " << expanded.status().message() << "\n";
    return kUsage;
  }
  if (int code = FitRunLayout(*expanded, &options); code != kOk) return code;
  const std::string spec_text = SpecFileText(options.spec_path);
  const std::string dir = options.run_dir.empty() ? RunDirectoryFor(expanded.value()) : options.run_dir;
  if (int code = CreateRunDirectory(dir); code != kOk) return code;
  if (int code = AnnounceRun(*expanded, dir); code != kOk) return code;
  const RunDirectory run{dir};
  EmbeddedRun embedded;
  if (int code = StartRunCoordinator(options, run, &embedded); code != kOk) return code;
  CoordinatorConnection& client = *embedded.connection;
  int64_t sweep_id = 0;
  if (int code = SubmitRunSpec(client, options.spec_path, spec_text, expanded->spec.name, &sweep_id); code != kOk) {
    return code;
  }
  const std::string& address = embedded.coordinator.address;
  if (int code = StartRunWorkers(options, run, address, &embedded.workers); code != kOk) return code;
  embedded.dashboard = StartRunDashboard(options, run, address);
  SweepWatch watch;
  if (int code = WatchRunToEnd(options, dir, client, sweep_id, embedded.workers, &watch); code != kOk) return code;
  std::string tuned_summary =
      expanded->spec.tune.set && g_interrupted.load() == 0 ? TunedSummary(client, sweep_id) : "";
  if (expanded->spec.precision.set && g_interrupted.load() == 0) {
    tuned_summary += PrecisionSummary(client, sweep_id, /*with_fit=*/!expanded->spec.tune.set);
  }
  StopEmbeddedRun(embedded, watch.out_of_space);
  return ReportRunOutcome(*expanded, watch, tuned_summary, dir);
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run", "Run a sweep on this machine: coordinator, database and local workers in one command, live progress, "
             "results and compute multipliers at the end");
  command->add_option("spec", options->spec_path, "Sweep spec (YAML)")->required();
  CLI::Option* workers = command->add_option("--workers", options->workers, "Local workers (default 2, fewer where the spec's trials need more CPUs each)")->check(PositiveNumberCheck());
  CLI::Option* cpus = command->add_option("--cpus-per-worker", options->cpus_per_worker,
                      "Threads of each worker (default: the cores shared out)")->check(PositiveNumberCheck(/*zero_allowed=*/true));
  command->add_option("--dir", options->run_dir,
                      "Run directory (default rung-runs/<name>-<time>); one used before is served again, and every "
                      "unfinished sweep in it runs on, not only this spec's");
  command->add_option("--lease-seconds", options->lease_seconds, "Lease duration")->check(PositiveNumberCheck());
  command->add_option("--trainer", options->trainer, "The trainer the workers run (default: rung-train beside rung)")
      ->type_name("PATH");
  command->add_flag("--dashboard", options->dashboard,
                    "Serve the web dashboard (rung dashboard, read-only) during the run and print its URL");
  command->add_option("--dashboard-listen", options->dashboard_listen,
                      "Where --dashboard listens (default 127.0.0.1:8050; 127.0.0.1:0 picks a free port)")
      ->type_name("HOST:PORT");
  command->callback([options, exit_code, workers, cpus]() {
    options->layout_given = workers->count() > 0 || cpus->count() > 0;
    *exit_code = RunEmbedded(*options);
  });
}

RUNG_CLI_COMMAND("run", kHere, AddRunCommand);

}  // namespace rung::cli
