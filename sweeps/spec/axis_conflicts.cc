#include "sweeps/spec/axis_conflicts.h"

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace rung {
namespace {

// One part of the spec that sets keys in every cell.
struct Setter {
  std::string description;  // "the axis sweep.train.lr", "the ladder rule ladder.lr"
  std::string location;
  std::set<std::string> keys;
};

// The keys `value` sets at `path`: the leaves of a mapping, else `path`.
void AddLeaves(const std::string& path, const nlohmann::json& value, std::set<std::string>* keys) {
  if (!value.is_object() || value.empty()) {
    keys->insert(path);
    return;
  }
  for (auto it = value.begin(); it != value.end(); ++it) AddLeaves(path + "." + it.key(), it.value(), keys);
}

std::string Describe(const SweepAxis& axis) {
  if (axis.kind == "list") return "the axis sweep." + axis.keys.front();
  std::string keys;
  for (const std::string& key : axis.keys) keys += (keys.empty() ? "" : ", ") + key;
  return (axis.kind == "zip" ? "the zip group of " : "the random axis of ") + keys;
}

// True when `a` and `b` are one key, or one lies inside the other.
bool Overlap(const std::string& a, const std::string& b) {
  const std::string& shorter = a.size() <= b.size() ? a : b;
  const std::string& longer = a.size() <= b.size() ? b : a;
  return longer.compare(0, shorter.size(), shorter) == 0 &&
         (longer.size() == shorter.size() || longer[shorter.size()] == '.');
}

}  // namespace

void CheckAxisConflicts(const SweepAxes& axes, const Ladder& ladder, const ConfigDocument& document,
                        SpecDiagnostics* diagnostics) {
  // The ladder's rules first: an axis after them is the later part.
  std::vector<Setter> setters;
  if (ladder.tokens_per_param > 0) {
    setters.push_back({"the ladder rule ladder.tokens_per_param",
                       document.Locate("ladder.tokens_per_param"),
                       {"train.tokens", "train.steps"}});
  }
  if (!ladder.isoflop_budgets.empty()) {
    setters.push_back({"the ladder rule ladder.isoflop_budgets",
                       document.Locate("ladder.isoflop_budgets"),
                       {"train.tokens", "train.steps"}});
  }
  if (ladder.lr.set) setters.push_back({"the ladder rule ladder.lr", ladder.lr.location, {"train.lr"}});
  if (ladder.batch_size.set) {
    setters.push_back({"the ladder rule ladder.batch_size", ladder.batch_size.location, {"train.batch_size"}});
  }
  if (document.json.contains("ladder") && document.json["ladder"].is_object() &&
      document.json["ladder"].contains("depths")) {
    setters.push_back({"the ladder's depth rules (ladder.depths)",
                       document.Locate("ladder.depths"),
                       {"model.layers", "model.heads", "model.head_dim", "model.d_model"}});
  }
  const size_t rules = setters.size();
  for (const SweepAxis& axis : axes.axes) {
    Setter setter{Describe(axis), axis.location, {}};
    for (const AxisPoint& point : axis.points) {
      for (size_t key = 0; key < axis.keys.size() && key < point.values.size(); ++key) {
        AddLeaves(axis.keys[key], point.values[key], &setter.keys);
      }
    }
    setters.push_back(std::move(setter));
  }
  for (size_t later = rules; later < setters.size(); ++later) {
    for (size_t earlier = 0; earlier < later; ++earlier) {
      for (const std::string& key : setters[later].keys) {
        const std::string* clash = nullptr;
        for (const std::string& other : setters[earlier].keys) {
          if (Overlap(key, other)) clash = &other;
          if (clash != nullptr) break;
        }
        if (clash == nullptr) continue;
        diagnostics->Error(setters[later].location, "sweep",
                           setters[later].description + " and " + setters[earlier].description + " (" +
                               setters[earlier].location + ") both set " +
                               (key.size() <= clash->size() ? key : *clash) +
                               ": every cell would take one of them and never the other's values; set each key in one "
                               "place (step keys together in a zip group)");
        break;
      }
    }
  }
}

}  // namespace rung
