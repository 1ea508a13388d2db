#include "coordinator/server/source_trials.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>
#include <vector>

#include "core/config/yaml_document.h"
#include "sweeps/spec/json_path.h"
#include "sweeps/spec/spec_diagnostics.h"

namespace rung::server {
namespace {

constexpr char kKey[] = "train.init.from_trial";
constexpr size_t kMinimumIdentityPrefix = 6;

// The conditions of a selector's "KEY=VALUE,..." (VALUE as JSON, else a string); empty where one lacks
// its key or its '='.
std::vector<std::pair<std::string, nlohmann::json>> SelectorConditions(const std::string& text) {
  std::vector<std::pair<std::string, nlohmann::json>> conditions;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    std::string key;
    nlohmann::json value;
    if (!ParseKeyValue(text.substr(begin, end - begin), &key, &value)) return {};
    conditions.emplace_back(std::move(key), std::move(value));
    begin = end + 1;
  }
  return conditions;
}

// A trial's value of a selector key: its axis assignment (a label too), else its config's.
const nlohmann::json* SelectorValue(const TrialRecord& trial, const std::string& key) {
  const nlohmann::json& assignments = trial.cell.assignments;
  if (assignments.is_object() && assignments.contains(key)) return &assignments.at(key);
  return FindPath(trial.cell.config, key);
}

// The trial of `sweep_name` whose keys hold `selector`'s values and, unless the selector names the
// seed, whose seed is `seed`.
StatusOr<TrialRecord> FindSelectedTrial(const std::string& name, const std::string& sweep_name,
                                        const std::string& selector, int64_t seed, const SweepRecord& sweep,
                                        const TrialLifecycle& trials) {
  const auto conditions = SelectorConditions(selector);
  if (conditions.empty()) {
    return Status::InvalidArgument("'" + name + "': a selector is KEY=VALUE[,KEY=VALUE...] after the sweep name "
                                   "(e.g. cpu-ladder/label=rope or cpu-ladder/train.lr=0.003)");
  }
  bool names_seed = false;
  for (const auto& [key, value] : conditions) names_seed = names_seed || key == "seed";
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> listed, trials.List(sweep.id));
  for (const auto& [key, value] : conditions) {
    const bool known = key == "seed" || std::any_of(listed.begin(), listed.end(), [&](const TrialRecord& trial) {
                         return SelectorValue(trial, key) != nullptr;
                       });
    if (!known) {
      return Status::InvalidArgument("'" + name + "': '" + key + "' is no key of sweep " + sweep_name +
                                     "'s trials (a sweep axis, a label, seed, or a dotted key of the trial config)");
    }
  }
  std::vector<const TrialRecord*> found;
  for (const TrialRecord& trial : listed) {
    // A cancelled trial (one a resubmission removed, too) is no source.
    bool holds = trial.state != TrialState::kCancelled && (names_seed || trial.cell.seed == seed);
    for (const auto& [key, value] : conditions) {
      if (!holds) break;
      if (key == "seed") {
        holds = value.is_number_integer() && value.get<int64_t>() == trial.cell.seed;
        continue;
      }
      const nlohmann::json* actual = SelectorValue(trial, key);
      holds = actual != nullptr && *actual == value;
    }
    if (holds) found.push_back(&trial);
  }
  const std::string which = names_seed ? "" : " with seed " + std::to_string(seed);
  if (found.empty()) {
    return Status::InvalidArgument("'" + name + "': no trial of sweep " + sweep_name + which + " has " + selector +
                                   " (see `rung trials " + std::to_string(sweep.id) + "`)");
  }
  if (found.size() > 1) {
    return Status::InvalidArgument("'" + name + "': " + std::to_string(found.size()) + " trials of sweep " +
                                   sweep_name + which + " have " + selector + " (trials " +
                                   std::to_string(found[0]->trial_index) + " and " +
                                   std::to_string(found[1]->trial_index) + "); add a key that tells them apart");
  }
  return *found.front();
}

// The trial a name stands for (for a trial of seed `seed`), or an error message for the spec.
StatusOr<TrialRecord> FindSourceTrial(const std::string& name, int64_t seed, const SweepManager& sweeps,
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
  size_t slash = name.rfind('/');
  // A selector: the first '/' before an '=' ends the sweep name (values may hold '/').
  const size_t equals = name.find('=');
  if (equals != std::string::npos) slash = name.rfind('/', equals);
  int64_t index = -1;
  if (slash != std::string::npos && slash + 1 < name.size() && equals == std::string::npos) {
    const std::string digits = name.substr(slash + 1);
    bool numeric = digits.size() <= 12;
    for (char c : digits) numeric = numeric && std::isdigit(static_cast<unsigned char>(c));
    if (numeric) index = std::stoll(digits);
  }
  if (slash == std::string::npos || slash == 0 || (index < 0 && equals == std::string::npos)) {
    return Status::InvalidArgument("'" + name +
                                   "' is not a trial name: use \"<sweep name>/<trial index>\" (e.g. cpu-ladder/3), "
                                   "\"<sweep name>/KEY=VALUE,...\" (the trial with those values and this trial's "
                                   "seed) or \"id:<identity prefix>\"");
  }
  const std::string sweep_name = name.substr(0, slash);
  StatusOr<SweepRecord> sweep = sweeps.FindByName(sweep_name);
  if (!sweep.ok()) {
    if (sweep.status().code() == StatusCode::kNotFound) {
      return Status::InvalidArgument("'" + name + "': no sweep named " + sweep_name + " (see `rung sweeps`)");
    }
    return sweep.status();
  }
  if (equals != std::string::npos) {
    return FindSelectedTrial(name, sweep_name, name.substr(slash + 1), seed, *sweep, trials);
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialRecord> listed, trials.List(sweep->id));
  for (const TrialRecord& trial : listed) {
    if (trial.trial_index == index) return trial;
  }
  return Status::InvalidArgument("'" + name + "': sweep " + sweep_name + " has no trial with index " +
                                 std::to_string(index) + " (see `rung trials " + std::to_string(sweep->id) + "`)");
}

// The checkpoint folder of the source's successful attempt, or an error message for the spec.
StatusOr<std::string> SourceCheckpointFolder(const std::string& name, int64_t seed, const SweepManager& sweeps,
                                             const TrialLifecycle& trials) {
  RUNG_ASSIGN_OR_RETURN(TrialRecord source, FindSourceTrial(name, seed, sweeps, trials));
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

// Where the cell's from_trial value is written: its axis value (a list axis, or a zip group's), else
// the default.
std::string Locate(const ConfigDocument* document, const ExpandedTrial& trial, const std::string& file_name) {
  if (document == nullptr) return file_name;
  const nlohmann::json* sweep = document->json.contains("sweep") && document->json["sweep"].is_object()
                                    ? &document->json["sweep"]
                                    : nullptr;
  // Each list that may hold the value, with its spec path.
  std::vector<std::pair<const nlohmann::json*, std::string>> lists;
  if (sweep != nullptr && sweep->contains(kKey)) lists.emplace_back(&(*sweep)[kKey], std::string("sweep.") + kKey);
  if (sweep != nullptr && sweep->contains("zip") && (*sweep)["zip"].is_array()) {
    for (size_t group = 0; group < (*sweep)["zip"].size(); ++group) {
      const nlohmann::json& zipped = (*sweep)["zip"][group];
      if (zipped.is_object() && zipped.contains(kKey)) {
        lists.emplace_back(&zipped[kKey], "sweep.zip[" + std::to_string(group) + "]." + kKey);
      }
    }
  }
  if (trial.assignments.contains(kKey)) {
    for (const auto& [list, path] : lists) {
      if (!list->is_array()) continue;
      for (size_t i = 0; i < list->size(); ++i) {
        if ((*list)[i] == trial.assignments[kKey]) return document->Locate(path + "[" + std::to_string(i) + "]");
      }
    }
  }
  if (trial.assignments.contains(kKey)) return document->Locate(std::string("sweep.") + kKey);
  return document->Locate(kKey);
}

}  // namespace

Status ResolveSourceTrials(const std::string& spec_text, const std::string& file_name, const SweepManager& sweeps,
                           const TrialLifecycle& trials, ExpandedSweep* expanded) {
  // (name, seed) -> checkpoint folder: a selector's source depends on the trial's seed.
  std::map<std::pair<std::string, int64_t>, StatusOr<std::string>> resolved;
  const auto key_of = [](const ExpandedTrial& trial) {
    return std::make_pair(trial.config.train.init.from_trial, static_cast<int64_t>(trial.config.seed));
  };
  bool unresolved = false;
  for (const ExpandedTrial& trial : expanded->trials) {
    const std::string& name = trial.config.train.init.from_trial;
    if (name.empty() || resolved.count(key_of(trial))) continue;
    StatusOr<std::string> folder = SourceCheckpointFolder(name, static_cast<int64_t>(trial.config.seed), sweeps, trials);
    if (!folder.ok() && folder.status().code() != StatusCode::kInvalidArgument) return folder.status();  // the store
    unresolved = unresolved || !folder.ok();
    resolved.emplace(key_of(trial), std::move(folder));
  }
  if (unresolved) {  // every cell that names one, at the location of its value
    StatusOr<ConfigDocument> document = ParseConfigDocument(spec_text, file_name);
    SpecDiagnostics errors;
    for (const ExpandedTrial& trial : expanded->trials) {
      const std::string& name = trial.config.train.init.from_trial;
      if (name.empty() || resolved.at(key_of(trial)).ok()) continue;
      errors.Error(Locate(document.ok() ? &document.value() : nullptr, trial, file_name), kKey,
                   resolved.at(key_of(trial)).status().message());
    }
    return errors.ToStatus();
  }
  for (ExpandedTrial& trial : expanded->trials) {
    const std::string& name = trial.config.train.init.from_trial;
    if (name.empty()) continue;
    if (!trial.config.train.init.checkpoint.empty()) continue;  // the spec named a checkpoint itself
    trial.config.train.init.checkpoint = resolved.at(key_of(trial)).value();
    trial.config_json["train"]["init"]["checkpoint"] = trial.config.train.init.checkpoint;
  }
  return Status::Ok();
}

}  // namespace rung::server
