// coordinator/domain/sweep_manager.cc
#include "coordinator/domain/sweep_manager.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "coordinator/domain/transitions.h"
#include "coordinator/store/event_log.h"

namespace rung {
namespace {

using domain::Cause;

bool IsValidSweepName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                         c == '_' || c == '.';
    if (!allowed) return false;
  }
  return true;
}

Status ValidateSubmission(const SweepSubmission& submission) {
  if (!IsValidSweepName(submission.name)) {
    return Status::InvalidArgument("sweep name '" + submission.name +
                                   "' must be letters, digits, '-', '_' or '.' (it names the checkpoint folder)");
  }
  if (submission.trials.empty()) return Status::InvalidArgument("sweep " + submission.name + " has no trials");
  for (size_t position = 0; position < submission.trials.size(); ++position) {
    const TrialCell& cell = submission.trials[position];
    const std::string which = "sweep " + submission.name + ", trial " + std::to_string(position);
    if (cell.identity.empty()) return Status::InvalidArgument(which + " has no identity");
    if (!cell.config.is_object()) return Status::InvalidArgument(which + ": config must be a JSON object");
    if (cell.cpus < 0 || cell.gpus < 0) return Status::InvalidArgument(which + ": cpus and gpus must be >= 0");
  }
  return Status::Ok();
}

// The submission's cells, each identity once (the first occurrence); repeats go to `duplicates`.
std::vector<const TrialCell*> UniqueCells(const SweepSubmission& submission, std::vector<std::string>* duplicates) {
  std::vector<const TrialCell*> cells;
  std::set<std::string> seen;
  for (const TrialCell& cell : submission.trials) {
    if (seen.insert(cell.identity).second) {
      cells.push_back(&cell);
    } else {
      duplicates->push_back(cell.identity);
    }
  }
  return cells;
}

StatusOr<SubmitResult> CreateSweep(Tables& tables, const SweepSubmission& submission, const std::string& actor) {
  SubmitResult result;
  RUNG_ASSIGN_OR_RETURN(result.sweep_id, tables.sweeps().Insert(submission, tables.now()));
  result.created = true;
  int64_t trial_index = 0;
  for (const TrialCell* cell : UniqueCells(submission, &result.duplicates)) {
    RUNG_ASSIGN_OR_RETURN(int64_t trial_id, tables.trials().Insert(result.sweep_id, trial_index++, *cell,
                                                                   submission.policy.priority, tables.now()));
    result.added.push_back(cell->identity);
    result.trial_ids[cell->identity] = trial_id;
  }

  EventRecord event = domain::NewEvent(tables, event_kind::kSweepSubmitted,
                                       {actor, "submitted with " + std::to_string(result.added.size()) +
                                                   " trials (spec " + submission.spec_hash + ")"});
  event.sweep_id = result.sweep_id;
  event.to_state = SweepStateName(SweepState::kActive);
  RUNG_RETURN_IF_ERROR(tables.events().Append(event));
  return result;
}

StatusOr<SubmitResult> ResubmitSweep(Tables& tables, SweepRecord sweep, const SweepSubmission& submission,
                                     const std::string& actor) {
  SubmitResult result;
  result.sweep_id = sweep.id;
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> existing, tables.trials().OfSweep(sweep.id));
  std::unordered_map<std::string, TrialRecord*> by_identity;
  int64_t next_index = 0;
  for (TrialRecord& trial : existing) {
    by_identity[trial.cell.identity] = &trial;
    next_index = std::max(next_index, trial.trial_index + 1);
  }

  const Cause resubmitted{actor, "resubmitted"};
  std::set<std::string> submitted;
  for (const TrialCell* cell : UniqueCells(submission, &result.duplicates)) {
    submitted.insert(cell->identity);
    auto found = by_identity.find(cell->identity);
    if (found == by_identity.end()) {
      RUNG_ASSIGN_OR_RETURN(int64_t trial_id, tables.trials().Insert(sweep.id, next_index++, *cell,
                                                                     submission.policy.priority, tables.now()));
      result.added.push_back(cell->identity);
      result.trial_ids[cell->identity] = trial_id;
      continue;
    }
    TrialRecord& trial = *found->second;
    result.trial_ids[cell->identity] = trial.id;
    if (trial.state == TrialState::kSucceeded || trial.state == TrialState::kEarlyStopped) {
      result.skipped_succeeded.push_back(cell->identity);
    } else if (IsLive(trial.state)) {
      result.unchanged.push_back(cell->identity);
    } else {  // PENDING, FAILED or CANCELLED: not running, so it takes the new spec's cell
      RUNG_RETURN_IF_ERROR(tables.trials().UpdateCell(trial.id, *cell, submission.policy.priority, tables.now()));
      if (trial.state == TrialState::kPending) {
        result.unchanged.push_back(cell->identity);
      } else {
        RUNG_RETURN_IF_ERROR(domain::RequeueByUser(tables, trial, resubmitted));
        result.requeued.push_back(cell->identity);
      }
    }
  }
  const Cause removed{actor, "removed from the spec by a resubmission"};
  // A precision aim's seeds: the cells (rung label, assignments but the seed) the spec still has.
  std::set<std::string> cells_but_seed;
  auto cell_but_seed = [](const TrialCell& cell) {
    nlohmann::json assignments = cell.assignments;
    assignments.erase("seed");
    return cell.rung_label + " " + assignments.dump();
  };
  if (!submission.precision.empty()) {
    for (const TrialCell& cell : submission.trials) cells_but_seed.insert(cell_but_seed(cell));
  }
  for (TrialRecord& trial : existing) {
    if (submitted.count(trial.cell.identity)) continue;
    if (!submission.tuned_key.empty() && trial.cell.assignments.contains(submission.tuned_key)) continue;
    if (cells_but_seed.count(cell_but_seed(trial.cell))) continue;
    result.removed.push_back(trial.cell.identity);
    result.removed_trials.push_back(trial);
    // A FAILED trial the new spec no longer has is cancelled too: its failure no longer counts against
    // policy.max_failed, so a fixed spec runs rather than leaving the sweep FAILED.
    if (!IsTerminal(trial.state) || trial.state == TrialState::kFailed) {
      RUNG_RETURN_IF_ERROR(domain::CancelTrial(tables, trial, removed));
    }
  }
  RUNG_RETURN_IF_ERROR(tables.sweeps().UpdateSpec(sweep.id, submission, tables.now()));

  EventRecord event = domain::NewEvent(tables, event_kind::kSweepResubmitted, {actor, ""});
  event.sweep_id = sweep.id;
  event.reason = "spec " + sweep.spec_hash + " -> " + submission.spec_hash + ": " +
                 std::to_string(result.added.size()) + " new, " + std::to_string(result.skipped_succeeded.size()) +
                 " succeeded (skipped), " + std::to_string(result.requeued.size()) + " requeued, " +
                 std::to_string(result.unchanged.size()) + " unchanged, " + std::to_string(result.removed.size()) +
                 " removed";
  RUNG_RETURN_IF_ERROR(tables.events().Append(event));

  if (sweep.state == SweepState::kCancelled) {
    RUNG_RETURN_IF_ERROR(domain::MoveSweep(tables, sweep, SweepState::kActive, resubmitted));
  }
  RUNG_RETURN_IF_ERROR(domain::SettleSweep(tables, sweep.id, actor));
  return result;
}

StatusOr<SubmitResult> SubmitOrResubmit(Tables& tables, const SweepSubmission& submission, const std::string& actor) {
  RUNG_ASSIGN_OR_RETURN(std::optional<SweepRecord> existing, tables.sweeps().FindByName(submission.name));
  if (!existing) return CreateSweep(tables, submission, actor);
  return ResubmitSweep(tables, std::move(*existing), submission, actor);
}

std::string ReasonOr(const std::string& reason, const std::string& fallback) {
  return reason.empty() ? fallback : reason;
}

}  // namespace

StatusOr<SubmitResult> SweepManager::Submit(const SweepSubmission& submission, const std::string& actor) {
  RUNG_RETURN_IF_ERROR(ValidateSubmission(submission));
  RUNG_ASSIGN_OR_RETURN(SubmitResult result,
                        store_.Write([&](Tables& tables) { return SubmitOrResubmit(tables, submission, actor); }));
  ChangeSignals::Announce(signals_, !result.added.empty() || !result.requeued.empty());
  return result;
}

StatusOr<SubmitResult> SweepManager::Preview(const SweepSubmission& submission, const std::string& actor) const {
  RUNG_RETURN_IF_ERROR(ValidateSubmission(submission));
  return store_.Preview([&](Tables& tables) { return SubmitOrResubmit(tables, submission, actor); });
}

StatusOr<SweepRecord> SweepManager::Get(int64_t sweep_id) const {
  return store_.Read([&](Tables& tables) { return tables.sweeps().Get(sweep_id); });
}

StatusOr<SweepRecord> SweepManager::FindByName(const std::string& name) const {
  RUNG_ASSIGN_OR_RETURN(std::optional<SweepRecord> sweep,
                        store_.Read([&](Tables& tables) { return tables.sweeps().FindByName(name); }));
  if (!sweep) return Status::NotFound("no sweep is named '" + name + "'");
  return std::move(*sweep);
}

StatusOr<std::vector<SweepRecord>> SweepManager::List() const {
  return store_.Read([&](Tables& tables) { return tables.sweeps().List(); });
}

StatusOr<std::map<TrialState, int64_t>> SweepManager::CountTrialsByState(int64_t sweep_id) const {
  return store_.Read([&](Tables& tables) -> StatusOr<std::map<TrialState, int64_t>> {
    RUNG_RETURN_IF_ERROR(tables.sweeps().Get(sweep_id));
    return tables.trials().CountByState(sweep_id);
  });
}

Status SweepManager::Pause(int64_t sweep_id, const std::string& actor, const std::string& reason) {
  return Toggle(sweep_id, SweepState::kActive, SweepState::kPaused, {actor, ReasonOr(reason, "paused")});
}

Status SweepManager::Resume(int64_t sweep_id, const std::string& actor, const std::string& reason) {
  return Toggle(sweep_id, SweepState::kPaused, SweepState::kActive, {actor, ReasonOr(reason, "resumed")});
}

Status SweepManager::Toggle(int64_t sweep_id, SweepState from, SweepState to, const domain::Cause& cause) {
  RUNG_RETURN_IF_ERROR(store_.Write([&](Tables& tables) -> Status {
    RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(sweep_id));
    if (sweep.state == to) return Status::Ok();
    if (sweep.state != from) {
      return Status::FailedPrecondition("sweep " + sweep.name + " is " + SweepStateName(sweep.state) + ": only " +
                                        (from == SweepState::kActive ? "an ACTIVE sweep can be paused"
                                                                     : "a PAUSED sweep can be resumed"));
    }
    return domain::MoveSweep(tables, sweep, to, cause);
  }));
  ChangeSignals::Announce(signals_, to == SweepState::kActive);
  return Status::Ok();
}

Status SweepManager::Cancel(int64_t sweep_id, const std::string& actor, const std::string& reason) {
  RUNG_RETURN_IF_ERROR(store_.Write([&](Tables& tables) -> Status {
    RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(sweep_id));
    if (sweep.state == SweepState::kCancelled) return Status::Ok();
    if (sweep.state == SweepState::kSucceeded) {
      return Status::FailedPrecondition("sweep " + sweep.name + " already SUCCEEDED: nothing to cancel");
    }
    const Cause cause{actor, ReasonOr(reason, "sweep cancelled")};
    RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> unfinished, tables.trials().UnfinishedOfSweep(sweep_id));
    for (TrialRecord& trial : unfinished) RUNG_RETURN_IF_ERROR(domain::CancelTrial(tables, trial, cause));
    return domain::MoveSweep(tables, sweep, SweepState::kCancelled, cause);
  }));
  ChangeSignals::Announce(signals_, false);
  return Status::Ok();
}

StatusOr<int64_t> SweepManager::RetryFailed(int64_t sweep_id, const std::string& actor) {
  RUNG_ASSIGN_OR_RETURN(std::vector<int64_t> retried, RetryTrials(sweep_id, {}, actor));
  return static_cast<int64_t>(retried.size());
}

StatusOr<std::vector<int64_t>> SweepManager::RetryTrials(int64_t sweep_id, const std::vector<int64_t>& trial_ids,
                                                         const std::string& actor, const std::string& reason) {
  RUNG_ASSIGN_OR_RETURN(std::vector<int64_t> retried, store_.Write([&](Tables& tables) -> StatusOr<std::vector<int64_t>> {
    RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, tables.sweeps().Get(sweep_id));
    if (sweep.state == SweepState::kCancelled) {
      return Status::FailedPrecondition("sweep " + sweep.name + " was CANCELLED: resubmit its spec to run it again");
    }
    std::vector<TrialRecord> chosen;
    if (trial_ids.empty()) {
      RUNG_ASSIGN_OR_RETURN(chosen, tables.trials().FailedOfSweep(sweep_id));
    }
    for (int64_t trial_id : trial_ids) {
      RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Get(trial_id));
      if (trial.sweep_id != sweep_id) {
        return Status::InvalidArgument(tables.trials().Describe(trial) + " is not a trial of sweep " + sweep.name);
      }
      if (trial.state != TrialState::kFailed) {
        return Status::FailedPrecondition(tables.trials().Describe(trial) + " is " + TrialStateName(trial.state) +
                                          ": only FAILED trials can be retried (nothing was changed)");
      }
      chosen.push_back(std::move(trial));
    }
    const Cause cause{actor, ReasonOr(reason, trial_ids.empty() ? "retry of the sweep's failed trials" : "retried")};
    std::vector<int64_t> requeued;
    for (TrialRecord& trial : chosen) {
      RUNG_RETURN_IF_ERROR(domain::RequeueByUser(tables, trial, cause));
      requeued.push_back(trial.id);
    }
    RUNG_RETURN_IF_ERROR(domain::SettleSweep(tables, sweep_id, actor));
    return requeued;
  }));
  if (!retried.empty()) ChangeSignals::Announce(signals_, true);
  return retried;
}

Status SweepManager::SetTag(int64_t sweep_id, const std::string& key, const std::string& value) {
  if (key.empty()) return Status::InvalidArgument("a tag needs a key");
  RUNG_RETURN_IF_ERROR(store_.Write([&](Tables& tables) -> Status {
    RUNG_RETURN_IF_ERROR(tables.sweeps().Get(sweep_id));
    return tables.sweeps().SetTag(sweep_id, key, value);
  }));
  ChangeSignals::Announce(signals_, false);
  return Status::Ok();
}

StatusOr<std::map<std::string, std::string>> SweepManager::Tags(int64_t sweep_id) const {
  return store_.Read([&](Tables& tables) { return tables.sweeps().Tags(sweep_id); });
}

}  // namespace rung
