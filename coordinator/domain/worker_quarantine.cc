// coordinator/domain/worker_quarantine.cc
#include "coordinator/domain/worker_quarantine.h"

#include <set>
#include <vector>

#include "coordinator/domain/transitions.h"
#include "coordinator/store/event_log.h"

namespace rung::domain {
namespace {

constexpr int kCannotStart = 127;
// How many of a worker's newest endings a run of faults is looked for in (a run longer than
// kFaultsInARow forms only of one trial's exits 1 and 4, which max_retries ends).
constexpr int64_t kLongestRunLooked = 64;

bool IsMachineFault(const WorkerEnding& ending) { return ending.exit_code == kCannotStart || ending.exit_code < 0; }

std::string DescribeEnding(const WorkerEnding& ending) {
  const std::string code =
      ending.exit_code < 0 ? "signal " + std::to_string(-ending.exit_code) : "exit " + std::to_string(ending.exit_code);
  return "trial " + std::to_string(ending.trial_id) + " attempt " + std::to_string(ending.attempt) + " (" + code + ")";
}

// The run of faults that ends with the newest of `endings` (newest first): the unbroken prefix of
// worker faults not yet refunded, reported within kFaultWindow of the newest.
std::vector<WorkerEnding> RunOfFaults(const std::vector<WorkerEnding>& endings) {
  std::vector<WorkerEnding> run;
  for (const WorkerEnding& ending : endings) {
    if (!ending.worker_fault || ending.refunded || endings.front().ended_at - ending.ended_at > kFaultWindow) break;
    run.push_back(ending);
  }
  return run;
}

// Whether `run` quarantines its worker.
bool QuarantinesItsWorker(const std::vector<WorkerEnding>& run) {
  if (static_cast<int>(run.size()) < kFaultsInARow) return false;
  std::set<int64_t> trials;
  bool all_machine = true;
  for (const WorkerEnding& ending : run) {
    trials.insert(ending.trial_id);
    all_machine = all_machine && IsMachineFault(ending);
  }
  return trials.size() >= 2 || all_machine;
}

// Takes `ending` off its trial's failures; counts it in `verdict` when it is `trial_id`'s.
Status Refund(Tables& tables, const WorkerEnding& ending, int64_t trial_id, EndingVerdict& verdict) {
  RUNG_RETURN_IF_ERROR(tables.trials().RemoveFailure(ending.trial_id));
  RUNG_RETURN_IF_ERROR(tables.workers().MarkRefunded(ending.id));
  if (ending.trial_id == trial_id) ++verdict.refunded_of_trial;
  return Status::Ok();
}

// A trial of the run that had failed for good goes back to PENDING when its retries allow now.
Status RequeueIfRetriesAllow(Tables& tables, int64_t trial_id, const Cause& cause) {
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Header(trial_id));
  if (trial.state != TrialState::kFailed) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(trial.sweep_id));
  if (sweep.state == SweepState::kCancelled || trial.failures > sweep.policy.max_retries) return Status::Ok();
  RUNG_RETURN_IF_ERROR(MoveTrial(tables, trial, TrialState::kPending, cause));
  return SettleSweep(tables, trial.sweep_id, cause.actor);
}

}  // namespace

bool IsWorkerFault(TrialState outcome, int exit_code) {
  return outcome == TrialState::kFailed &&
         (exit_code == 1 || exit_code == 4 || exit_code == kCannotStart || exit_code < 0);
}

StatusOr<EndingVerdict> RecordEnding(Tables& tables, const std::string& worker_id, int64_t trial_id, int64_t attempt,
                                     TrialState outcome, int exit_code) {
  WorkerEnding ending;
  ending.worker_id = worker_id;
  ending.trial_id = trial_id;
  ending.attempt = attempt;
  ending.ended_at = tables.now();
  ending.outcome = outcome;
  ending.exit_code = exit_code;
  ending.worker_fault = IsWorkerFault(outcome, exit_code);
  RUNG_ASSIGN_OR_RETURN(ending.id, tables.workers().InsertEnding(ending));

  EndingVerdict verdict;
  if (!ending.worker_fault) return verdict;
  RUNG_ASSIGN_OR_RETURN(std::optional<WorkerRecord> worker, tables.workers().Find(worker_id));
  if (!worker) return Status::NotFound("worker " + worker_id + " is not registered: register it again");
  if (worker->quarantined_at) {
    RUNG_RETURN_IF_ERROR(Refund(tables, ending, trial_id, verdict));
    return verdict;
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<WorkerEnding> endings,
                        tables.workers().RecentEndings(worker_id, kLongestRunLooked));
  const std::vector<WorkerEnding> run = RunOfFaults(endings);
  if (!QuarantinesItsWorker(run)) return verdict;

  std::string faults;
  for (auto it = run.rbegin(); it != run.rend(); ++it) faults += (faults.empty() ? "" : ", ") + DescribeEnding(*it);
  verdict.quarantined = true;
  verdict.reason = std::to_string(run.size()) + " attempts in a row failed for reasons of the worker within " +
                   std::to_string(kFaultWindow.count()) + " minutes: " + faults +
                   "; their failures do not count against max_retries. `rung workers --release " + worker_id +
                   "` or restarting the worker lifts the quarantine";
  RUNG_RETURN_IF_ERROR(tables.workers().SetQuarantine(worker_id, tables.now(), verdict.reason));
  const Cause cause{kCoordinatorActor, "worker " + worker_id + " quarantined: " + verdict.reason};
  RUNG_RETURN_IF_ERROR(tables.events().Append(NewEvent(tables, event_kind::kWorkerQuarantined, cause)));
  std::set<int64_t> others;
  for (const WorkerEnding& fault : run) {
    RUNG_RETURN_IF_ERROR(Refund(tables, fault, trial_id, verdict));
    if (fault.trial_id != trial_id) others.insert(fault.trial_id);
  }
  for (int64_t other : others) RUNG_RETURN_IF_ERROR(RequeueIfRetriesAllow(tables, other, cause));
  return verdict;
}

}  // namespace rung::domain
