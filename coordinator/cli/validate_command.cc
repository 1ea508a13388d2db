#include "coordinator/cli/validate_command.h"

#include <iostream>
#include <memory>
#include <optional>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/exit_codes.h"
#include "coordinator/cli/text_table.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/tune/lr_search.h"

namespace rung::cli {
namespace {

struct ValidateOptions {
  std::string spec_path;
  std::string format = "table";
  // rung-train's achieved FLOP/s (matrix + attention) at 2 threads, small shape (bench/README.md).
  double flops_per_sec = 1.4e11;
  int workers = 1;
  int64_t max_trials = kDefaultMaxTrials;
};

std::string CellText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

int RunValidate(const ValidateOptions& options) {
  StatusOr<ExpandedSweep> sweep =
      LoadSweepSpec(options.spec_path, ExpansionLimits{options.max_trials, "rung validate --max-trials N"});
  if (!sweep.ok()) {
    std::cerr << "rung validate: " << sweep.status().message() << "\n";
    return kUsage;
  }
  for (const SpecDiagnostic& warning : sweep->warnings) std::cerr << warning.ToString() << "\n";

  std::vector<std::string> axis_keys = sweep->spec.axes.Keys();
  // With a search, the trials are those it starts with; the worst case is stated below.
  std::optional<TuningPlan> plan;
  const double flops_all_per_6nd = sweep->TotalFlops() > 0 ? sweep->TotalFlopsAll() / sweep->TotalFlops() : 1.0;
  if (sweep->spec.tune.set) {
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
    plan = std::move(*planned);
    std::vector<ExpandedTrial> first;
    for (PlannedTrial& trial : plan->trials) first.push_back(std::move(trial.trial));
    sweep->trials = std::move(first);
    axis_keys.push_back(sweep->spec.tune.key);
  }
  std::vector<std::string> columns = {"trial", "rung"};
  columns.insert(columns.end(), axis_keys.begin(), axis_keys.end());
  for (const char* column : {"baseline", "N_nonemb", "N_total", "tokens", "flops_6ND", "identity"}) columns.push_back(column);
  TextTable table(columns);
  for (const ExpandedTrial& trial : sweep->trials) {
    std::vector<std::string> cells = {std::to_string(trial.index), trial.rung_label};
    nlohmann::json row = {{"trial", trial.index}, {"rung", trial.rung_label}};
    for (const std::string& key : axis_keys) {
      const nlohmann::json& value = trial.assignments.contains(key) ? trial.assignments[key] : nlohmann::json();
      cells.push_back(CellText(value));
      row[key] = value;
    }
    // People read rounded figures; scripts get exact ones.
    const bool human = options.format == "table";
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
    table.AddRow(cells, row);
  }
  table.Print(std::cout, options.format);
  if (options.format == "table") {
    const double seconds = sweep->TotalFlopsAll() / options.flops_per_sec / std::max(1, options.workers);
    std::cout << "\n"
              << sweep->trials.size() << " trials in " << sweep->spec.ladder.rungs.size() << " rung(s); "
              << "total compute 6ND = " << Scientific(sweep->TotalFlops()) << " FLOPs ("
              << Scientific(sweep->TotalFlopsAll()) << " with the output head and attention); "
              << HumanCount(sweep->TotalTokens()) << " tokens\n"
              << "estimated time: " << HumanDuration(seconds) << " on " << options.workers << " worker(s) at "
              << Scientific(options.flops_per_sec, 2)
              << " FLOP/s each (--flops-per-sec; rung-train's measured rate at 2 threads, bench/README.md)\n";
    if (plan) {
      const TuneSpec& tune = sweep->spec.tune;
      int64_t started = 0, waiting = 0;
      for (const TuningCellReport& cell : plan->cells) (cell.status == CellStatus::kWaiting ? waiting : started) += 1;
      const double worst_seconds =
          plan->worst_case_flops * flops_all_per_6nd / options.flops_per_sec / std::max(1, options.workers);
      std::cout << "search of " << tune.key << ": " << plan->cells.size() << " tuning cells, " << started
                << " start now with the trials above (" << tune.start << " values from the centre), " << waiting
                << " wait for smaller rungs (predict: " << (tune.predict ? "power_law" : "none") << ")\n"
                << "worst case (max_points " << tune.max_points << " per cell, then every seed at the best): "
                << plan->worst_case_trials << " trials, 6ND = " << Scientific(plan->worst_case_flops)
                << " FLOPs, estimated time " << HumanDuration(worst_seconds) << " on " << options.workers
                << " worker(s)\n";
    }
  }
  return kOk;
}

}  // namespace

void AddValidateCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command = app.add_subcommand("validate", "Check and expand a sweep spec; print its trials and compute");
  command->add_option("spec", options->spec_path, "Sweep spec (YAML)")->required();
  command->add_option("--format", options->format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  command->add_option("--flops-per-sec", options->flops_per_sec,
                      "Training FLOP/s of one worker, for the time estimate")->check(Positive());
  command->add_option("--workers", options->workers, "Workers sharing the sweep, for the time estimate")
      ->check(Positive());
  command
      ->add_option("--max-trials", options->max_trials,
                   "Refuse a spec that expands to more trials (checked before expanding; a coordinator has its own "
                   "limit, rung-coordinator --max-trials-per-submission)")
      ->capture_default_str()
      ->check(Positive());
  command->callback([options, exit_code]() { *exit_code = RunValidate(*options); });
}

}  // namespace rung::cli
