#include "sweeps/spec/sweep_spec.h"

#include <algorithm>
#include <regex>

#include "core/config/config_error.h"
#include "sweeps/spec/axis_conflicts.h"

namespace rung {
namespace {

const std::vector<std::string>& TopLevelKeys() {
  static const std::vector<std::string> keys = {"name",  "description", "metric",    "baseline",
                                                "seed",  "data",        "model",     "position",
                                                "inverse_temperature", "train", "resources", "policy",
                                                "ladder", "sweep"};
  return keys;
}

const std::vector<std::string>& TrialBlocks() {
  static const std::vector<std::string> blocks = {"seed", "data", "model", "position", "inverse_temperature", "train",
                                                  "resources"};
  return blocks;
}

void ReadInteger(const nlohmann::json& block, const std::string& key, const std::string& path, int64_t minimum,
                 int64_t* out, const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  if (!block.contains(key)) return;
  const nlohmann::json& value = block[key];
  if (!value.is_number_integer() || value.get<int64_t>() < minimum) {
    diagnostics->Error(document.Locate(path), path, "expected an integer >= " + std::to_string(minimum));
    return;
  }
  *out = value.get<int64_t>();
}

void RejectUnknown(const nlohmann::json& block, const std::string& path, const std::vector<std::string>& known,
                   const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  for (auto it = block.begin(); it != block.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string nearest = NearestKey(it.key(), known);
    const std::string key_path = path.empty() ? it.key() : path + "." + it.key();
    diagnostics->Error(document.Locate(key_path), key_path,
                       "unknown key" + (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)"));
  }
}

}  // namespace

SweepSpec ParseSweepSpec(const ConfigDocument& document, const ExpansionLimits& limits, SpecDiagnostics* diagnostics) {
  SweepSpec spec;
  const nlohmann::json& root = document.json;
  RejectUnknown(root, "", TopLevelKeys(), document, diagnostics);

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
      RejectUnknown(metric, "metric", {"name", "goal"}, document, diagnostics);
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
      RejectUnknown(policy, "policy", {"max_retries", "max_failed", "priority"}, document, diagnostics);
      ReadInteger(policy, "max_retries", "policy.max_retries", 0, &spec.policy.max_retries, document, diagnostics);
      ReadInteger(policy, "max_failed", "policy.max_failed", 1, &spec.policy.max_failed, document, diagnostics);
      ReadInteger(policy, "priority", "policy.priority", -1000000, &spec.policy.priority, document, diagnostics);
    }
  }

  spec.ladder = ParseLadder(root.contains("ladder") ? &root["ladder"] : nullptr, document, diagnostics);
  spec.axes = ParseSweepAxes(root.contains("sweep") ? &root["sweep"] : nullptr, document, limits, diagnostics);
  CheckAxisConflicts(spec.axes, spec.ladder, document, diagnostics);
  return spec;
}

}  // namespace rung
