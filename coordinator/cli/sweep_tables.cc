#include "coordinator/cli/sweep_tables.h"

#include <iostream>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"
#include "proto/config_value.h"

namespace rung::cli {

namespace pb = rung::v1;

std::string EnumText(const std::string& enum_name, const std::string& prefix) {
  return enum_name.rfind(prefix, 0) == 0 ? enum_name.substr(prefix.size()) : enum_name;
}
std::string SweepStateName(pb::SweepState state) { return EnumText(pb::SweepState_Name(state), "SWEEP_STATE_"); }
std::string TrialStateName(pb::TrialState state) { return EnumText(pb::TrialState_Name(state), "TRIAL_STATE_"); }

std::string CellText(const google::protobuf::RepeatedPtrField<pb::ConfigEntry>& assignments) {
  std::string text;
  for (const pb::ConfigEntry& entry : assignments) {
    text += (text.empty() ? "" : " ") + entry.key() + "=" + ValueText(wire::FromConfigValue(entry.value()));
  }
  return text;
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

}  // namespace rung::cli
