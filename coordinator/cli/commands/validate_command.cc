// coordinator/cli/commands/validate_command.cc
//
// `rung validate SPEC`: parses, validates and expands a sweep spec without a coordinator, and prints
// the trial table (rung, axis values, N, tokens, FLOPs, identity), the total compute and an
// estimated time from a measured training throughput. Errors: every one with file:line:col on
// stderr, exit code 2; warnings on stderr.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/calibration_cache.h"
#include "core/common/atomic_file.h"
#include "core/common/trainer_blas_kernel.h"
#include "core/common/utc_time.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/local_coordinator.h"
#include "coordinator/cli/text_table.h"
#include "coordinator/cli/trial_time_model.h"
#include "core/common/subprocess.h"
#include "core/config/inverse_temperature_form.h"
#include "core/config/length_extension_method.h"
#include "core/config/model_arithmetic.h"
#include "core/config/positional_variant.h"
#include "core/records/trainer_records.h"
#include "sweeps/plot/gnuplot_script.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/spec/trial_work.h"
#include "sweeps/tune/lr_search.h"

namespace rung::cli {
namespace {

namespace fs = std::filesystem;

struct ValidateOptions {
  std::string spec_path;
  std::string format = "table";
  double flops_per_sec = 0;  // 0: the calibration, else kUncalibratedFlopsPerSec
  int workers = 1;
  int cpus_per_worker = 0;  // 0: the trials' threads (one trial at a time per worker)
  bool layout_given = false;  // --workers or --cpus-per-worker was given
  int64_t max_trials = kDefaultMaxTrials;
  bool calibrate = false;
  std::string trainer;  // "": rung-train beside rung
};

// The trainer --calibrate times and whose BLAS kernel a calibration is checked against.
std::string TrainerPath(const ValidateOptions& options) {
  return options.trainer.empty() ? ExecutableDirectory() + "/rung-train" : options.trainer;
}

// Times rung-train on `trial` shortened to `steps` steps (held-out evaluation at the end only, no
// start from another trial's checkpoint): one calibration point, or why not.
StatusOr<CalibrationPoint> TimeTrainer(const std::string& trainer, const ExpandedTrial& trial, int64_t steps,
                                       const fs::path& folder) {
  nlohmann::json config = trial.config_json;
  config["train"]["steps"] = steps;
  config["train"].erase("tokens");
  config["train"]["eval_every"] = 0;
  config["train"]["checkpoint_every"] = 0;
  config["train"].erase("init");
  StatusOr<TrialConfig> parsed = TrialConfigFromJson(config);
  if (!parsed.ok()) return parsed.status().WithContext("the shortened trial of rung " + trial.rung_label);
  const fs::path config_path = folder / ("calibrate-" + plot::FileNamePart(trial.rung_label) + ".json");
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(config_path.string(), {config.dump()}));
  SubprocessOptions options;
  options.argv = {trainer, "--config", config_path.string(), "--threads",
                  std::to_string(std::max<int64_t>(1, parsed->resources.cpus)), "--resume", "never"};
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::TruncateTo((folder / "rung-train.log").string());
  const auto start = std::chrono::steady_clock::now();
  RUNG_ASSIGN_OR_RETURN(SubprocessResult result, Subprocess::Run(options, std::chrono::minutes(10)));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (result.timed_out || result.exit.ShellCode() != 0) {
    return Status::Internal("rung-train on rung " + trial.rung_label + " " +
                            (result.timed_out ? std::string("ran over 10 minutes") :
                                                "exited " + std::to_string(result.exit.ShellCode())) +
                            " (its stderr: " + (folder / "rung-train.log").string() + ")");
  }
  double tokens_per_sec = 0;
  std::istringstream lines(result.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    StatusOr<records::TrainerRecord> record = records::DecodeRecord(line);
    if (!record.ok()) continue;
    if (const auto* final_record = std::get_if<records::FinalRecord>(&*record)) {
      tokens_per_sec = final_record->train_tokens_per_sec;
    }
  }
  if (!(tokens_per_sec > 0)) {
    return Status::Internal("rung-train on rung " + trial.rung_label + " reported no steady training rate");
  }
  CalibrationPoint point;
  point.flops_per_token = TrainingFlopsPerToken(*parsed);
  point.flops_per_sec = tokens_per_sec * point.flops_per_token;
  point.seconds_per_trial = std::max(0.0, wall - CountTrialWork(*parsed).total() / point.flops_per_sec);
  point.shape = trial.rung_label + " T" + std::to_string(parsed->data.seq_len) + " B" +
                std::to_string(parsed->train.batch_size);
  return point;
}

// `rung validate SPEC --calibrate`: times each rung of the sweep (its first trial, shortened) and
// caches the points under the spec's trainer threads. The exit code.
int Calibrate(const ExpandedSweep& sweep, const ValidateOptions& options, int threads) {
  const std::string trainer = TrainerPath(options);
  std::error_code error;
  const fs::path folder = fs::temp_directory_path(error) / ("rung-calibrate-" + std::to_string(::getpid()));
  fs::create_directories(folder, error);
  if (error) {
    std::cerr << "rung validate: cannot create " << folder.string() << ": " << error.message() << "\n";
    return kFailure;
  }
  // The trainer's scratch runs go with the folder on every way out, a failed timing included.
  struct RemoveFolder {
    fs::path path;
    ~RemoveFolder() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove_folder{folder};
  Calibration calibration;
  calibration.key = CalibrationKey(threads);
  calibration.measured_at = UtcNow();
  StatusOr<TrainerBlasKernel> kernel = AskTrainerForBlasKernel(trainer);
  if (!kernel.ok()) {
    std::cerr << "rung validate: --calibrate: " << kernel.status().message() << "\n";
    return kFailure;
  }
  calibration.blas_kernel = kernel->Short();
  std::map<std::string, bool> timed;
  for (const ExpandedTrial& trial : sweep.trials) {
    if (timed[trial.rung_label]) continue;
    timed[trial.rung_label] = true;
    // About 10 s of training at the uncalibrated rate, 20 to 200 steps, never more than the trial has.
    const double step_flops = trial.flops_total / static_cast<double>(std::max<int64_t>(1, trial.config.train.steps));
    const int64_t steps = std::min<int64_t>(
        trial.config.train.steps,
        std::clamp<int64_t>(static_cast<int64_t>(10 * kUncalibratedFlopsPerSec / 20 / std::max(step_flops, 1.0)), 20, 200));
    std::cerr << "rung validate: timing rung " << trial.rung_label << " (" << steps << " steps of rung-train, "
              << threads << " thread(s))...\n";
    StatusOr<CalibrationPoint> point = TimeTrainer(trainer, trial, steps, folder);
    if (!point.ok()) {
      std::cerr << "rung validate: --calibrate: " << point.status().message() << "\n";
      return kFailure;
    }
    std::cerr << "  " << point->shape << ": " << Scientific(point->flops_per_sec, 2) << " FLOP/s, "
              << Number(point->seconds_per_trial, 3) << " s fixed per trial\n";
    calibration.points.push_back(*point);
  }
  std::vector<std::string> warnings;
  const std::string path = CalibrationCachePath();
  const Status written = WriteCalibration(path, calibration, &warnings);
  for (const std::string& warning : warnings) std::cerr << "rung validate: warning: " << warning << "\n";
  if (!written.ok()) {
    std::cerr << "rung validate: --calibrate: " << written.message() << "\n";
    return kFailure;
  }
  std::cerr << "rung validate: calibration saved in " << path << " (" << calibration.key << ", BLAS kernel "
            << calibration.blas_kernel << ")\n";
  return kOk;
}

// With a search: its plan, its first trials in the sweep's place, its key after `axis_keys`; kOk, or kUsage.
int StartTrialsOfSearch(ExpandedSweep* sweep, std::vector<std::string>* axis_keys, std::optional<TuningPlan>* plan) {
  if (!sweep->spec.tune.set) return kOk;
  if (!sweep->spec.tune.from_sweep.empty()) {
    std::cerr << "rung validate: tune.from_sweep takes each cell's best value from sweep '"
              << sweep->spec.tune.from_sweep << "' on the coordinator: the trials below are the first values of "
              << "a search; `rung submit --dry-run` shows the real ones\n";
  }
  StatusOr<TuningPlan> planned = PlanTuning(*sweep, {});
  if (!planned.ok()) {
    std::cerr << "rung validate: " << planned.status().message() << "\n";
    return kUsage;
  }
  *plan = std::move(*planned);
  std::vector<ExpandedTrial> first;
  for (PlannedTrial& trial : (*plan)->trials) first.push_back(std::move(trial.trial));
  sweep->trials = std::move(first);
  axis_keys->push_back(sweep->spec.tune.key);
  return kOk;
}

// Adds the trial's row: rounded figures and a short identity for people (`human`), exact ones for scripts.
void AddTrialRow(const ExpandedTrial& trial, const std::vector<std::string>& axis_keys, bool human, TextTable* table) {
  std::vector<std::string> cells = {std::to_string(trial.index), trial.rung_label};
  nlohmann::json row = {{"trial", trial.index}, {"rung", trial.rung_label}};
  for (const std::string& key : axis_keys) {
    const nlohmann::json& value = trial.assignments.contains(key) ? trial.assignments[key] : nlohmann::json();
    cells.push_back(ValueText(value));
    row[key] = value;
  }
  auto count = [&](double value) { return human ? HumanCount(value) : std::to_string(static_cast<int64_t>(value)); };
  cells.push_back(trial.baseline ? "yes" : "");
  cells.push_back(count(static_cast<double>(trial.parameters.nonembedding())));
  cells.push_back(count(static_cast<double>(trial.parameters.total())));
  cells.push_back(count(static_cast<double>(trial.tokens)));
  cells.push_back(Scientific(trial.flops));
  cells.push_back(human ? trial.identity.substr(0, 12) : trial.identity);
  row["baseline"] = trial.baseline;
  row["N_nonemb"] = trial.parameters.nonembedding();
  row["N_total"] = trial.parameters.total();
  row["tokens"] = trial.tokens;
  row["flops_6ND"] = trial.flops;
  row["flops_total"] = trial.flops_total;
  row["identity"] = trial.identity;
  row["config"] = trial.config_json;
  table->AddRow(cells, row);
}

// The trial table: trial, rung, the axes, then sizes, compute and identity; `format` table is read by people.
TextTable ValidateTrialTable(const ExpandedSweep& sweep, const std::vector<std::string>& axis_keys,
                             const std::string& format) {
  std::vector<std::string> columns = {"trial", "rung"};
  columns.insert(columns.end(), axis_keys.begin(), axis_keys.end());
  for (const char* column : {"baseline", "N_nonemb", "N_total", "tokens", "flops_6ND", "identity"}) columns.push_back(column);
  TextTable table(columns);
  for (const ExpandedTrial& trial : sweep.trials) AddTrialRow(trial, axis_keys, format == "table", &table);
  return table;
}

// Prints the time `rung run SPEC` would take here in its worker layout (run_command.h) for trials of `seconds`.
void PrintRunLayoutTime(const std::vector<double>& seconds, int threads) {
  const int run_cpus = RunCpusPerWorker(kRunDefaultWorkers, 0);
  const int run_per_worker = std::max(1, run_cpus / threads);
  std::cout << "with rung run's layout here (" << kRunDefaultWorkers << " workers of " << run_cpus << " CPU(s), "
            << run_per_worker << " trial(s) at a time each): "
            << HumanDuration(Makespan(seconds, kRunDefaultWorkers * run_per_worker)) << "\n";
}

// Prints the search's cells, started or waiting, and its worst case at the started trials' seconds per 6ND FLOP.
void PrintSearchWorstCase(const ExpandedSweep& sweep, const TuningPlan& plan, const std::vector<double>& seconds,
                          int workers, int cpus, int per_worker) {
  const TuneSpec& tune = sweep.spec.tune;
  int64_t started = 0, waiting = 0;
  for (const TuningCellReport& cell : plan.cells) (cell.status == CellStatus::kWaiting ? waiting : started) += 1;
  double started_seconds = 0;
  for (double each : seconds) started_seconds += each;
  const double worst_seconds =
      sweep.TotalFlops() > 0 ? plan.worst_case_flops / sweep.TotalFlops() * started_seconds / (workers * per_worker)
                             : 0.0;
  std::cout << "search of " << tune.key << ": " << plan.cells.size() << " tuning cells, " << started
            << " start now with the trials above (" << tune.start << " values from the centre), " << waiting
            << " wait for smaller rungs (predict: " << (tune.predict ? "power_law" : "none") << ")\n"
            << "worst case (max_points " << tune.max_points << " per cell, then every seed at the best): "
            << plan.worst_case_trials << " trials, 6ND = " << Scientific(plan.worst_case_flops)
            << " FLOPs, estimated time " << HumanDuration(worst_seconds) << " on " << workers << " worker(s) of "
            << cpus << " CPU(s)\n";
}

// Prints the total compute and estimated time (also in `rung run`'s layout when calibrated), and a search's worst case.
void PrintEstimates(const ExpandedSweep& sweep, const ValidateOptions& options, const TimeModel& time_model,
                    int threads, const std::optional<TuningPlan>& plan) {
  std::vector<double> seconds;
  double full_flops = 0;
  for (const ExpandedTrial& trial : sweep.trials) {
    seconds.push_back(time_model.Seconds(trial));
    full_flops += CountTrialWork(trial.config).total();
  }
  // Each worker runs as many trials at once as its CPU slots hold (rung-worker --cpus).
  const int cpus = options.cpus_per_worker > 0 ? options.cpus_per_worker : threads;
  const int per_worker = std::max(1, cpus / threads);
  std::cout << "\n"
            << sweep.trials.size() << " trials in " << sweep.spec.ladder.rungs.size() << " rung(s); "
            << "total compute 6ND = " << Scientific(sweep.TotalFlops()) << " FLOPs ("
            << Scientific(sweep.TotalFlopsAll()) << " with the output head and attention, "
            << Scientific(full_flops) << " with evaluation too); " << HumanCount(sweep.TotalTokens()) << " tokens\n"
            << "estimated time: " << HumanDuration(Makespan(seconds, options.workers * per_worker)) << " on "
            << options.workers << " worker(s) of " << cpus << " CPU(s), " << per_worker << " trial(s) at a time each, "
            << EstimateBasis(time_model, options.flops_per_sec, threads, options.spec_path) << "\n";
  if (time_model.calibration && !options.layout_given) PrintRunLayoutTime(seconds, threads);
  if (plan) PrintSearchWorstCase(sweep, *plan, seconds, options.workers, cpus, per_worker);
}

// `rung validate SPEC`: prints the trials and, in table format, their compute and time; the exit code.
int RunValidate(const ValidateOptions& options) {
  StatusOr<ExpandedSweep> sweep =
      LoadSweepSpec(options.spec_path, ExpansionLimits{options.max_trials, "rung validate --max-trials N"});
  if (!sweep.ok()) {
    std::cerr << "rung validate: " << sweep.status().message() << "\n";
    return kUsage;
  }
  for (const SpecDiagnostic& warning : sweep->warnings) std::cerr << warning.ToString() << "\n";
  const int threads = TrainerThreads(*sweep);
  if (options.calibrate) {
    if (int code = Calibrate(*sweep, options, threads); code != kOk) return code;
  }
  const TimeModel time_model = ChooseTimeModel(options.flops_per_sec, TrainerPath(options), threads, "rung validate");
  // With a search, the trials are those it starts with; the worst case is stated below.
  std::vector<std::string> axis_keys = sweep->spec.axes.Keys();
  std::optional<TuningPlan> plan;
  if (int code = StartTrialsOfSearch(&*sweep, &axis_keys, &plan); code != kOk) return code;
  ValidateTrialTable(*sweep, axis_keys, options.format).Print(std::cout, options.format);
  if (options.format == "table") PrintEstimates(*sweep, options, time_model, threads, plan);
  return kOk;
}

}  // namespace

void AddValidateCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command = app.add_subcommand("validate", "Check and expand a sweep spec; print its trials and compute");
  command->footer("\n" + PositionalVariantsHelp() + "\n" + InverseTemperatureFormsHelp() + "\n" +
                  LengthExtensionMethodsHelp());
  command->add_option("spec", options->spec_path, "Sweep spec (YAML)")->required();
  command->add_option("--format", options->format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  command->add_option("--flops-per-sec", options->flops_per_sec,
                      "Training FLOP/s of one worker, for the time estimate (instead of the calibration)")
      ->check(PositiveNumberCheck());
  command->add_flag("--calibrate", options->calibrate,
                    "Time a short real run of each rung (rung-train, a few steps) on this machine and cache the rate "
                    "($XDG_CACHE_HOME/rung/calibration.json), then estimate with it");
  command->add_option("--trainer", options->trainer, "The trainer --calibrate times (default: rung-train beside rung)")
      ->type_name("PATH");
  CLI::Option* workers =
      command->add_option("--workers", options->workers, "Workers sharing the sweep, for the time estimate")
          ->check(PositiveNumberCheck());
  CLI::Option* cpus_per_worker =
      command->add_option("--cpus-per-worker", options->cpus_per_worker,
                   "CPU slots of each worker (rung-worker --cpus), for the time estimate: a worker runs as many trials "
                   "at once as its slots hold (default: the trials' resources.cpus, one at a time; rung run gives each "
                   "worker the machine's cores shared out)")
          ->check(PositiveNumberCheck(/*zero_allowed=*/true));
  command
      ->add_option("--max-trials", options->max_trials,
                   "Refuse a spec that expands to more trials (checked before expanding; a coordinator has its own "
                   "limit, rung-coordinator --max-trials-per-submission)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMaxTrialsCeiling));
  command->callback([options, exit_code, workers, cpus_per_worker]() {
    options->layout_given = workers->count() > 0 || cpus_per_worker->count() > 0;
    *exit_code = RunValidate(*options);
  });
}

RUNG_CLI_COMMAND("validate", kHere, AddValidateCommand);

}  // namespace rung::cli
