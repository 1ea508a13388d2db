// coordinator/server/sweep_submitter.cc
#include "coordinator/server/sweep_submitter.h"

#include <map>
#include <set>
#include <vector>

#include "coordinator/server/source_trials.h"
#include "coordinator/server/storage_space.h"
#include "coordinator/store/trial_cells.h"
#include "proto/config_value.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/spec/spec_diagnostics.h"
#include "sweeps/spec/storage_estimate.h"

namespace rung::server {
namespace {

using Outcome = v1::SubmittedCell::Outcome;

// Every leaf of a JSON document by dotted path ("train.lr"); arrays are leaves.
void Flatten(const nlohmann::json& value, const std::string& path, std::map<std::string, nlohmann::json>* leaves) {
  if (value.is_object() && !value.empty()) {
    for (auto item = value.begin(); item != value.end(); ++item) {
      Flatten(item.value(), path.empty() ? item.key() : path + "." + item.key(), leaves);
    }
    return;
  }
  (*leaves)[path] = value;
}

// "key: old -> new" for every leaf that differs, by key.
std::vector<std::string> Differences(const nlohmann::json& before, const nlohmann::json& after) {
  std::map<std::string, nlohmann::json> old_leaves;
  std::map<std::string, nlohmann::json> new_leaves;
  Flatten(before, "", &old_leaves);
  Flatten(after, "", &new_leaves);
  std::set<std::string> keys;
  for (const auto& [key, value] : old_leaves) keys.insert(key);
  for (const auto& [key, value] : new_leaves) keys.insert(key);
  std::vector<std::string> lines;
  for (const std::string& key : keys) {
    auto old_value = old_leaves.find(key);
    auto new_value = new_leaves.find(key);
    const std::string was = old_value == old_leaves.end() ? "(absent)" : old_value->second.dump();
    const std::string is = new_value == new_leaves.end() ? "(absent)" : new_value->second.dump();
    if (was != is) lines.push_back(key + ": " + was + " -> " + is);
  }
  return lines;
}

std::map<std::string, Outcome> OutcomesByIdentity(const SubmitResult& result) {
  std::map<std::string, Outcome> outcomes;
  for (const std::string& identity : result.added) outcomes[identity] = v1::SubmittedCell::OUTCOME_ADDED;
  for (const std::string& identity : result.skipped_succeeded) outcomes[identity] = v1::SubmittedCell::OUTCOME_SKIPPED;
  for (const std::string& identity : result.requeued) outcomes[identity] = v1::SubmittedCell::OUTCOME_REQUEUED;
  for (const std::string& identity : result.unchanged) outcomes[identity] = v1::SubmittedCell::OUTCOME_UNCHANGED;
  return outcomes;
}

// `cell`: the trial's cell in the submission (its config and assignments).
v1::Trial DryRunTrial(const ExpandedTrial& trial, const TrialCell& cell) {
  v1::Trial out;
  out.set_index(trial.index);
  out.set_rung(trial.rung);
  out.set_rung_label(trial.rung_label);
  wire::ToConfigEntries(cell.assignments, out.mutable_assignments());
  out.set_identity(trial.identity);
  out.set_baseline(trial.baseline);
  out.set_parameters_nonembedding(trial.parameters.nonembedding());
  out.set_parameters_total(trial.parameters.total());
  out.set_tokens(trial.tokens);
  out.set_flops(trial.flops);
  out.set_state(v1::TRIAL_STATE_PENDING);
  out.set_total_steps(cell.steps);
  return out;
}

v1::SpecDiagnostic ToProto(const SpecDiagnostic& diagnostic) {
  v1::SpecDiagnostic out;
  out.set_location(diagnostic.location);
  out.set_path(diagnostic.path);
  out.set_message(diagnostic.message);
  out.set_warning(diagnostic.warning);
  return out;
}

// `status`, after adding the spec errors an INVALID_ARGUMENT one lists (file:line:col each) to
// `diagnostics`.
Status WithDiagnostics(const Status& status, const std::string& file_name, v1::SpecDiagnostics* diagnostics) {
  if (status.code() == StatusCode::kInvalidArgument) {
    for (const SpecDiagnostic& diagnostic : ParseSpecDiagnostics(status.message(), file_name)) {
      *diagnostics->add_diagnostics() = ToProto(diagnostic);
    }
  }
  return status;
}

}  // namespace

StatusOr<v1::SubmitSweepResponse> SweepSubmitter::Submit(const v1::SubmitSweepRequest& request,
                                                         const std::string& actor, v1::SpecDiagnostics* diagnostics) {
  const std::string file_name = request.spec_file_name().empty() ? kDefaultSpecFileName : request.spec_file_name();
  StatusOr<ExpandedSweep> expanded = ExpandSweepSpecText(request.spec_text(), file_name, limits_);
  if (!expanded.ok()) return WithDiagnostics(expanded.status(), file_name, diagnostics);
  if (Status resolved = ResolveSourceTrials(request.spec_text(), file_name, sweeps_, trials_, &expanded.value());
      !resolved.ok()) {
    return WithDiagnostics(resolved, file_name, diagnostics);
  }
  // With a tune block the trials are those the search asks for, given what the sweep of that name has.
  bool search_complete = false;
  if (expanded->spec.tune.set) {
    StatusOr<TuningPlan> plan = tuner_.PlanForSubmission(*expanded, expanded->spec.name);
    if (!plan.ok()) return WithDiagnostics(plan.status(), file_name, diagnostics);
    std::vector<ExpandedTrial> planned;
    planned.reserve(plan->trials.size());
    for (PlannedTrial& trial : plan->trials) planned.push_back(std::move(trial.trial));
    expanded->trials = std::move(planned);
    search_complete = plan->complete();
  }
  // The cells take the trials' configs and assignments (no copy); the answer below reads them there.
  SweepSubmission submission = MakeSubmission(std::move(*expanded), request.spec_text(), file_name);
  if (search_complete) submission.tuning = kTuningComplete;
  RUNG_ASSIGN_OR_RETURN(SubmitResult result,
                        request.dry_run() ? sweeps_.Preview(submission, actor) : sweeps_.Submit(submission, actor));

  v1::SubmitSweepResponse response;
  response.set_sweep_id(request.dry_run() ? 0 : result.sweep_id);
  response.set_created(result.created);
  response.set_trial_count(static_cast<int64_t>(expanded->trials.size()));
  const std::map<std::string, Outcome> outcomes = OutcomesByIdentity(result);
  std::set<std::string> seen;
  int64_t will_run = 0;
  double flops = 0;
  std::vector<const ExpandedTrial*> to_run;
  for (size_t position = 0; position < expanded->trials.size(); ++position) {
    const ExpandedTrial& trial = expanded->trials[position];
    const TrialCell& submitted = submission.trials[position];
    v1::SubmittedCell* cell = response.add_cells();
    const bool first = seen.insert(trial.identity).second;
    auto known = outcomes.find(trial.identity);
    const Outcome outcome = !first                    ? v1::SubmittedCell::OUTCOME_DUPLICATE
                            : known != outcomes.end() ? known->second
                                                      : v1::SubmittedCell::OUTCOME_UNCHANGED;
    cell->set_outcome(outcome);
    cell->set_index(trial.index);
    if (auto id = result.trial_ids.find(trial.identity); !request.dry_run() && first && id != result.trial_ids.end()) {
      cell->set_trial_id(id->second);
    }
    cell->set_identity(trial.identity);
    cell->set_rung_label(trial.rung_label);
    wire::ToConfigEntries(submitted.assignments, cell->mutable_assignments());
    if (outcome == v1::SubmittedCell::OUTCOME_ADDED || outcome == v1::SubmittedCell::OUTCOME_REQUEUED) {
      ++will_run;
      flops += trial.flops;
      to_run.push_back(&trial);
    }
    if (outcome == v1::SubmittedCell::OUTCOME_ADDED) {
      for (const TrialRecord& removed : result.removed_trials) {
        if (removed.cell.rung_label != trial.rung_label || removed.cell.assignments != submitted.assignments) continue;
        for (const std::string& line : Differences(removed.cell.config, submitted.config)) cell->add_differences(line);
        cell->set_replaces_identity(removed.cell.identity);
        break;
      }
    }
    if (request.dry_run()) *response.add_trials() = DryRunTrial(trial, submitted);
  }
  for (const TrialRecord& removed : result.removed_trials) {
    v1::SubmittedCell* cell = response.add_cells();
    cell->set_outcome(v1::SubmittedCell::OUTCOME_REMOVED);
    cell->set_index(-1);
    cell->set_trial_id(removed.id);
    cell->set_identity(removed.cell.identity);
    cell->set_rung_label(removed.cell.rung_label);
    wire::ToConfigEntries(removed.cell.assignments, cell->mutable_assignments());
  }
  response.set_new_trial_count(will_run);
  response.set_total_flops(flops);
  for (const SpecDiagnostic& warning : expanded->warnings) *response.add_warnings() = ToProto(warning);
  for (const std::string& shortfall :
       SubmissionSpaceWarnings(database_path_, artifact_root_, EstimateStorageNeeds(to_run))) {
    v1::SpecDiagnostic* warning = response.add_warnings();
    warning->set_location(request.spec_file_name().empty() ? kDefaultSpecFileName : request.spec_file_name());
    warning->set_path("disk space");
    warning->set_message(shortfall);
    warning->set_warning(true);
  }
  return response;
}

}  // namespace rung::server
