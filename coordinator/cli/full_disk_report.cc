#include "coordinator/cli/full_disk_report.h"

#include "coordinator/cli/command_support.h"
#include "core/common/write_error.h"

namespace rung::cli {

namespace pb = rung::v1;

std::string WorkerFullDiskReport(CoordinatorConnection& connection, const std::vector<pb::Trial>& trials,
                                 int64_t since_seconds) {
  int probes = 0;
  for (const pb::Trial& trial : trials) {
    if (trial.attempt() == 0 || trial.state_reason().find("PREEMPTED") == std::string::npos) continue;
    if (++probes > kFullDiskProbes) break;
    pb::GetTrialRequest request;
    request.set_trial_id(trial.trial_id());
    request.set_view(pb::TRIAL_VIEW_FULL);
    pb::Trial full;
    if (!connection.user().GetTrial(connection.Context().get(), request, &full).ok() || full.attempts().empty()) {
      continue;
    }
    const pb::TrialAttempt& last = *full.attempts().rbegin();
    if (last.ended_at().seconds() < since_seconds) continue;  // before the run asking: space may be free now
    if (last.exit_reason().find(kNoSpaceMessage) == std::string::npos) continue;
    return "trial " + std::to_string(trial.trial_id()) + " attempt " + std::to_string(last.attempt()) + " (ended " +
           UtcTime(last.ended_at()) + "): " + last.exit_reason();
  }
  return "";
}

std::vector<std::string> FullDiskReports(CoordinatorConnection& connection, const std::string& storage_warning,
                                         const pb::Sweep& sweep, const std::vector<pb::Trial>& trials,
                                         int64_t since_seconds) {
  std::vector<std::string> reports;
  if (!storage_warning.empty()) reports.push_back(storage_warning);
  if (sweep.state() == pb::SWEEP_STATE_PAUSED && sweep.state_reason().find(kFullDiskPauseMark) != std::string::npos) {
    reports.push_back("sweep " + std::to_string(sweep.sweep_id()) + " is paused: " + sweep.state_reason());
  }
  // Once: a pause of `rung run` quotes the report it paused for.
  if (std::string worker = WorkerFullDiskReport(connection, trials, since_seconds);
      !worker.empty() && (reports.empty() || reports.back().find(worker) == std::string::npos)) {
    reports.push_back(std::move(worker));
  }
  return reports;
}

}  // namespace rung::cli
