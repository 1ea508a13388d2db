#include "coordinator/server/source_trials.h"

#include <cctype>
#include <map>

#include "core/config/yaml_document.h"
#include "sweeps/spec/spec_diagnostics.h"

namespace rung::server {
namespace {

constexpr char kKey[] = "train.init.from_trial";
constexpr size_t kMinimumIdentityPrefix = 6;

// The trial a name stands for, or an error message for the spec.
StatusOr<TrialRecord> FindSourceTrial(const std::string& name, const SweepManager& sweeps,
                                      const TrialLifecycle& trials) {
  if (name.rfind("id:", 0) == 0) {
    const std::string prefix = name.substr(3);
    bool hex = prefix.size() >= kMinimumIdentityPrefix;
    for (char c : prefix) hex = hex && std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(c);
    if (!hex) {
      return Status::InvalidArgument("'" + name + "': an identity prefix needs at least " +
                                     std::to_string(kMinimumIdentityPrefix) + " lower-case hex digits");
    }
    RUNG_ASSIGN_OR_RETURN(std::vector<SweepRecord> all, sweeps.List());
    std::vector<TrialRecord> found;
    for (const SweepRecord& sweep : all) {
      RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> listed, trials.List(sweep.id));
      for (const TrialRecord& trial : listed) {
        if (trial.cell.identity.rfind(prefix, 0) == 0) found.push_back(trial);
      }
    }
    if (found.empty()) return Status::InvalidArgument("'" + name + "': no trial has an identity starting with " + prefix);
    if (found.size() > 1) {
      return Status::InvalidArgument("'" + name + "': " + std::to_string(found.size()) +
                                     " trials have identities starting with " + prefix + "; give more digits");
    }
    return found.front();
  }
  const size_t slash = name.rfind('/');
  int64_t index = -1;
  if (slash != std::string::npos && slash + 1 < name.size()) {
    const std::string digits = name.substr(slash + 1);
    bool numeric = digits.size() <= 12;
    for (char c : digits) numeric = numeric && std::isdigit(static_cast<unsigned char>(c));
    if (numeric) index = std::stoll(digits);
  }
  if (slash == std::string::npos || slash == 0 || index < 0) {
    return Status::InvalidArgument("'" + name +
                                   "' is not a trial name: use \"<sweep name>/<trial index>\" (e.g. cpu-ladder/3) or "
                                   "\"id:<identity prefix>\"");
  }
  const std::string sweep_name = name.substr(0, slash);
  StatusOr<SweepRecord> sweep = sweeps.FindByName(sweep_name);
  if (!sweep.ok()) {
    if (sweep.status().code() == StatusCode::kNotFound) {
      return Status::InvalidArgument("'" + name + "': no sweep named " + sweep_name + " (see `rung sweeps`)");
    }
    return sweep.status();
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> listed, trials.List(sweep->id));
  for (const TrialRecord& trial : listed) {
    if (trial.trial_index == index) return trial;
  }
  return Status::InvalidArgument("'" + name + "': sweep " + sweep_name + " has no trial with index " +
                                 std::to_string(index) + " (see `rung trials " + std::to_string(sweep->id) + "`)");
}

// The checkpoint folder of the source's successful attempt, or an error message for the spec.
StatusOr<std::string> SourceCheckpointFolder(const std::string& name, const SweepManager& sweeps,
                                             const TrialLifecycle& trials) {
  RUNG_ASSIGN_OR_RETURN(TrialRecord source, FindSourceTrial(name, sweeps, trials));
  if (source.state != TrialState::kSucceeded) {
    return Status::InvalidArgument("'" + name + "' (trial " + std::to_string(source.id) + ") is " +
                                   TrialStateName(source.state) +
                                   "; a source trial must have SUCCEEDED before runs that start from it are submitted");
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<AttemptRecord> attempts, trials.Attempts(source.id));
  for (auto attempt = attempts.rbegin(); attempt != attempts.rend(); ++attempt) {
    if (attempt->state == TrialState::kSucceeded && !attempt->checkpoint_dir.empty()) return attempt->checkpoint_dir;
  }
  return Status::InvalidArgument("'" + name + "' (trial " + std::to_string(source.id) +
                                 ") has no successful attempt with a checkpoint folder");
}

// Where the cell's from_trial value is written: its axis value, else the default.
std::string Locate(const ConfigDocument* document, const ExpandedTrial& trial, const std::string& file_name) {
  if (document == nullptr) return file_name;
  const nlohmann::json* axis = nullptr;
  if (document->json.contains("sweep") && document->json["sweep"].is_object() &&
      document->json["sweep"].contains(kKey)) {
    axis = &document->json["sweep"][kKey];
  }
  if (trial.assignments.contains(kKey) && axis != nullptr && axis->is_array()) {
    for (size_t i = 0; i < axis->size(); ++i) {
      if ((*axis)[i] == trial.assignments[kKey]) {
        return document->Locate(std::string("sweep.") + kKey + "[" + std::to_string(i) + "]");
      }
    }
  }
  if (trial.assignments.contains(kKey)) return document->Locate(std::string("sweep.") + kKey);
  return document->Locate(kKey);
}

}  // namespace

Status ResolveSourceTrials(const std::string& spec_text, const std::string& file_name, const SweepManager& sweeps,
                           const TrialLifecycle& trials, ExpandedSweep* expanded) {
  std::map<std::string, StatusOr<std::string>> resolved;  // name -> checkpoint folder
  bool unresolved = false;
  for (const ExpandedTrial& trial : expanded->trials) {
    const std::string& name = trial.config.train.init.from_trial;
    if (name.empty() || resolved.count(name)) continue;
    StatusOr<std::string> folder = SourceCheckpointFolder(name, sweeps, trials);
    if (!folder.ok() && folder.status().code() != StatusCode::kInvalidArgument) return folder.status();  // the store
    unresolved = unresolved || !folder.ok();
    resolved.emplace(name, std::move(folder));
  }
  if (unresolved) {  // every cell that names one, at the location of its value
    StatusOr<ConfigDocument> document = ParseConfigDocument(spec_text, file_name);
    SpecDiagnostics errors;
    for (const ExpandedTrial& trial : expanded->trials) {
      const std::string& name = trial.config.train.init.from_trial;
      if (name.empty() || resolved.at(name).ok()) continue;
      errors.Error(Locate(document.ok() ? &document.value() : nullptr, trial, file_name), kKey,
                   resolved.at(name).status().message());
    }
    return errors.ToStatus();
  }
  for (ExpandedTrial& trial : expanded->trials) {
    const std::string& name = trial.config.train.init.from_trial;
    if (name.empty()) continue;
    if (!trial.config.train.init.checkpoint.empty()) continue;  // the spec named a checkpoint itself
    trial.config.train.init.checkpoint = resolved.at(name).value();
    trial.config_json["train"]["init"]["checkpoint"] = trial.config.train.init.checkpoint;
  }
  return Status::Ok();
}

}  // namespace rung::server
