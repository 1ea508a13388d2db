#include "sweeps/spec/sweep_spec.h"

#include <algorithm>
#include <regex>

#include "core/config/config_error.h"
#include "sweeps/spec/axis_conflicts.h"
#include "sweeps/spec/spec_blocks.h"

namespace rung {
namespace {

const std::vector<std::string>& TopLevelKeys() {
  static const std::vector<std::string> keys = {"name",  "description", "metric",    "baseline",
                                                "seed",  "data",        "model",     "position",
                                                "inverse_temperature", "train", "resources", "policy",
                                                "ladder", "sweep", "tune", "early_stop", "precision"};
  return keys;
}

const std::vector<std::string>& TrialBlocks() {
  static const std::vector<std::string> blocks = {"seed", "data", "model", "position", "inverse_temperature", "train",
                                                  "resources"};
  return blocks;
}

// The tune block against the rest of the spec: the key tuned is set by the search alone, tuning
// cells are made of axes (and the rung), and rung labels it names exist.
void CheckTuneAgainstSweep(const SweepSpec& spec, const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  const TuneSpec& tune = spec.tune;
  const std::string path = "tune." + tune.key;
  const std::vector<std::string> axis_keys = spec.axes.Keys();
  if (std::find(axis_keys.begin(), axis_keys.end(), tune.key) != axis_keys.end()) {
    diagnostics->Error(tune.location, path, "'" + tune.key + "' is a sweep axis too; the search sets it alone");
  }
  if (tune.key == "train.lr" && spec.ladder.lr.set) {
    diagnostics->Error(tune.location, path, "ladder.lr sets train.lr too; the search sets it alone (remove ladder.lr)");
  }
  for (size_t i = 0; i < tune.per.size(); ++i) {
    const std::string& key = tune.per[i];
    if (key == "rung" || key == "seed") continue;
    if (std::find(axis_keys.begin(), axis_keys.end(), key) == axis_keys.end()) {
      const std::string item_path = path + ".per[" + std::to_string(i) + "]";
      std::vector<std::string> known = axis_keys;
      known.push_back("rung");
      std::string nearest = NearestKey(key, known);
      diagnostics->Error(document.Locate(item_path), item_path,
                         "'" + key + "' is not a sweep axis" + (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)"));
    }
  }
  std::vector<std::string> labels;
  for (const LadderRung& rung : spec.ladder.rungs) labels.push_back(rung.label);
  const auto check_label = [&](const std::string& label, const std::string& label_path) {
    if (std::find(labels.begin(), labels.end(), label) != labels.end()) return;
    std::string nearest = NearestKey(label, labels);
    diagnostics->Error(document.Locate(label_path), label_path,
                       "'" + label + "' is not a rung label of the ladder" +
                           (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)"));
  };
  if (!tune.extrapolate_above.empty()) check_label(tune.extrapolate_above, path + ".extrapolate_above");
  for (const auto& [label, value] : tune.center_per_rung) check_label(label, path + ".center." + label);
  if (!tune.extrapolate_above.empty()) {
    bool above = false;
    for (const LadderRung& rung : spec.ladder.rungs) {
      if (above && tune.center_per_rung.count(rung.label) > 0) {
        diagnostics->Error(document.Locate(path + ".center." + rung.label), path + ".center." + rung.label,
                           "rung '" + rung.label + "' lies above extrapolate_above '" + tune.extrapolate_above +
                               "': it is not searched, so it takes no centre");
      }
      above = above || rung.label == tune.extrapolate_above;
    }
  }

  if (!tune.PerRung()) {
    // One cell spans every rung: nothing is per rung.
    if (!tune.center_per_rung.empty()) {
      diagnostics->Error(document.Locate(path + ".center"), path + ".center",
                         "a centre per rung needs `rung` in `per` (these cells span every rung): give one value");
    }
    if (!tune.extrapolate_above.empty()) {
      diagnostics->Error(document.Locate(path + ".extrapolate_above"), path + ".extrapolate_above",
                         "extrapolating across rungs needs `rung` in `per` (these cells span every rung)");
    }
  } else if (!tune.center && !tune.center_per_rung.empty() && !spec.ladder.rungs.empty()) {
    // A centre per rung without a common one: every rung that starts on its own centre needs one
    // (with predict: power_law only the smallest does; the others start where the fit points).
    for (size_t rung = 0; rung < spec.ladder.rungs.size() && (rung == 0 || !tune.predict); ++rung) {
      const std::string& label = spec.ladder.rungs[rung].label;
      if (tune.center_per_rung.count(label) > 0) continue;
      diagnostics->Error(document.Locate(path + ".center"), path + ".center",
                         "no centre for rung '" + label + "'" +
                             (tune.predict ? " (the smallest rung starts on its own centre)"
                                           : " (with predict: none every rung starts on its own centre)"));
    }
  }
}

}  // namespace

SweepSpec ParseSweepSpec(const ConfigDocument& document, const ExpansionLimits& limits, SpecDiagnostics* diagnostics) {
  SweepSpec spec;
  const nlohmann::json& root = document.json;
  RejectUnknownKeys(root, "", TopLevelKeys(), document, diagnostics);

  if (!root.contains("name") || !root["name"].is_string()) {
    diagnostics->Error(document.Locate(root.contains("name") ? "name" : ""), "name", "a spec needs a name (a string)");
  } else {
    spec.name = root["name"].get<std::string>();
    if (!std::regex_match(spec.name, std::regex("[A-Za-z0-9][A-Za-z0-9._-]*"))) {
      diagnostics->Error(document.Locate("name"), "name", "use letters, digits, '.', '-' and '_' (it names files)");
    }
  }
  if (root.contains("description")) spec.description = root["description"].is_string() ? root["description"].get<std::string>() : root["description"].dump();

  if (root.contains("metric")) {
    const nlohmann::json& metric = root["metric"];
    if (!metric.is_object()) {
      diagnostics->Error(document.Locate("metric"), "metric", "expected {name: val_loss, goal: minimize}");
    } else {
      RejectUnknownKeys(metric, "metric", {"name", "goal"}, document, diagnostics);
      if (metric.contains("name")) spec.metric.name = metric["name"].is_string() ? metric["name"].get<std::string>() : "";
      if (metric.contains("goal")) spec.metric.goal = metric["goal"].is_string() ? metric["goal"].get<std::string>() : "";
      if (spec.metric.name.empty()) diagnostics->Error(document.Locate("metric.name"), "metric.name", "expected a metric name");
      if (spec.metric.goal != "minimize" && spec.metric.goal != "maximize") {
        diagnostics->Error(document.Locate("metric.goal"), "metric.goal", "must be minimize or maximize");
      }
    }
  }

  if (root.contains("baseline")) {
    spec.baseline_location = document.Locate("baseline");
    if (!root["baseline"].is_object() || root["baseline"].empty()) {
      diagnostics->Error(spec.baseline_location, "baseline", "expected a mapping of dotted keys to values, e.g. {position.variant: rope}");
    } else {
      spec.baseline = root["baseline"];
    }
  }

  for (const std::string& block : TrialBlocks()) {
    if (root.contains(block)) spec.defaults[block] = root[block];
  }

  if (root.contains("policy")) {
    const nlohmann::json& policy = root["policy"];
    if (!policy.is_object()) {
      diagnostics->Error(document.Locate("policy"), "policy", "expected {max_retries, max_failed, priority}");
    } else {
      RejectUnknownKeys(policy, "policy", {"max_retries", "max_failed", "priority"}, document, diagnostics);
      ReadSpecInteger(policy, "max_retries", "policy.max_retries", 0, &spec.policy.max_retries, document, diagnostics);
      ReadSpecInteger(policy, "max_failed", "policy.max_failed", 1, &spec.policy.max_failed, document, diagnostics);
      ReadSpecInteger(policy, "priority", "policy.priority", -1000000, &spec.policy.priority, document, diagnostics);
    }
  }

  spec.ladder = ParseLadder(root.contains("ladder") ? &root["ladder"] : nullptr, document, limits, diagnostics);
  spec.axes = ParseSweepAxes(root.contains("sweep") ? &root["sweep"] : nullptr, document, limits, diagnostics);
  CheckAxisConflicts(spec.axes, spec.ladder, document, diagnostics);
  spec.tune = ParseTuneSpec(root.contains("tune") ? &root["tune"] : nullptr, document, diagnostics);
  spec.early_stop = ParseEarlyStopSpec(root.contains("early_stop") ? &root["early_stop"] : nullptr, document, diagnostics);
  spec.precision = ParsePrecisionSpec(root.contains("precision") ? &root["precision"] : nullptr, document, diagnostics);
  if (spec.tune.set) CheckTuneAgainstSweep(spec, document, diagnostics);
  return spec;
}

}  // namespace rung
