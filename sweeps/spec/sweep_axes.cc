#include "sweeps/spec/sweep_axes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/common/checked_arithmetic.h"

namespace rung {

std::vector<std::string> SweepAxes::Keys() const {
  std::vector<std::string> keys;
  for (const SweepAxis& axis : axes) keys.insert(keys.end(), axis.keys.begin(), axis.keys.end());
  return keys;
}

std::optional<int64_t> SweepAxes::CellsPerRung() const {
  CheckedInt64 cells = 1;
  for (const SweepAxis& axis : axes) cells = cells * static_cast<int64_t>(axis.points.size());
  return cells.value();
}

namespace {

std::string Indexed(const std::string& path, size_t index) { return path + "[" + std::to_string(index) + "]"; }

// splitmix64: a small, well-mixed, reproducible generator for the random axes.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

SweepAxis ParseListAxis(const std::string& key, const nlohmann::json& values, const std::string& path,
                        const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  SweepAxis axis{"list", {key}, {}, document.Locate(path)};
  if (!values.is_array() || values.empty()) {
    diagnostics->Error(axis.location, path, "an axis needs a non-empty list of values");
    return axis;
  }
  for (size_t index = 0; index < values.size(); ++index) {
    axis.points.push_back({{values[index]}, {document.Locate(Indexed(path, index))}, {Indexed(path, index)}});
  }
  return axis;
}

SweepAxis ParseZipAxis(const nlohmann::json& group, const std::string& path, const ConfigDocument& document,
                       SpecDiagnostics* diagnostics) {
  SweepAxis axis{"zip", {}, {}, document.Locate(path)};
  if (!group.is_object() || group.empty()) {
    diagnostics->Error(axis.location, path, "a zip group is a mapping of keys to lists of equal length");
    return axis;
  }
  size_t length = 0;
  for (auto it = group.begin(); it != group.end(); ++it) {
    const std::string key_path = path + "." + it.key();
    if (!it.value().is_array() || it.value().empty()) {
      diagnostics->Error(document.Locate(key_path), key_path, "expected a non-empty list");
      return axis;
    }
    if (length != 0 && it.value().size() != length) {
      diagnostics->Error(document.Locate(key_path), key_path,
                         "has " + std::to_string(it.value().size()) + " values; the zip group's first list has " +
                             std::to_string(length));
      return axis;
    }
    length = it.value().size();
    axis.keys.push_back(it.key());
  }
  for (size_t index = 0; index < length; ++index) {
    AxisPoint point;
    for (const std::string& key : axis.keys) {
      point.values.push_back(group[key][index]);
      point.locations.push_back(document.Locate(Indexed(path + "." + key, index)));
      point.paths.push_back(Indexed(path + "." + key, index));
    }
    axis.points.push_back(point);
  }
  return axis;
}

SweepAxis ParseRandomAxis(const nlohmann::json& block, const std::string& path, const ConfigDocument& document,
                          const ExpansionLimits& limits, SpecDiagnostics* diagnostics) {
  SweepAxis axis{"random", {}, {}, document.Locate(path)};
  if (!block.is_object() || !block.contains("samples") || !block.contains("axes")) {
    diagnostics->Error(axis.location, path, "random draws need {samples: N, seed: S, axes: {key: distribution}}");
    return axis;
  }
  for (auto it = block.begin(); it != block.end(); ++it) {
    if (it.key() != "samples" && it.key() != "seed" && it.key() != "axes") {
      diagnostics->Error(document.Locate(path + "." + it.key()), path + "." + it.key(),
                         "unknown key (expected samples, seed, axes)");
    }
  }
  const nlohmann::json& samples = block["samples"];
  if (!samples.is_number_integer() || samples.get<int64_t>() <= 0) {
    diagnostics->Error(document.Locate(path + ".samples"), path + ".samples", "must be a positive integer");
    return axis;
  }
  if (samples.get<int64_t>() > limits.max_trials) {
    diagnostics->Error(document.Locate(path + ".samples"), path + ".samples",
                       std::to_string(samples.get<int64_t>()) + " samples are " + TrialLimitText(limits));
    return axis;
  }
  const uint64_t seed = block.contains("seed") && block["seed"].is_number_integer() ? block["seed"].get<uint64_t>() : 0;
  const nlohmann::json& axes = block["axes"];
  if (!axes.is_object() || axes.empty()) {
    diagnostics->Error(document.Locate(path + ".axes"), path + ".axes", "expected a mapping of keys to distributions");
    return axis;
  }
  struct Distribution {
    std::string kind;
    nlohmann::json arguments;
    std::string location;
  };
  std::vector<Distribution> distributions;
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    const std::string key_path = path + ".axes." + it.key();
    const nlohmann::json& spec = it.value();
    const std::string location = document.Locate(key_path);
    if (!spec.is_object() || spec.size() != 1) {
      diagnostics->Error(location, key_path, "expected one of {uniform: [a, b]}, {log_uniform: [a, b]}, {choice: [...]}");
      continue;
    }
    const std::string kind = spec.begin().key();
    const nlohmann::json& arguments = spec.begin().value();
    const bool range = arguments.is_array() && arguments.size() == 2 && arguments[0].is_number() &&
                       arguments[1].is_number() && arguments[0].get<double>() < arguments[1].get<double>();
    if ((kind == "uniform" || kind == "log_uniform") && !range) {
      diagnostics->Error(location, key_path, kind + " needs [low, high] with low < high");
      continue;
    }
    if (kind == "log_uniform" && arguments[0].get<double>() <= 0) {
      diagnostics->Error(location, key_path, "log_uniform needs a positive lower bound");
      continue;
    }
    if (kind == "choice" && (!arguments.is_array() || arguments.empty())) {
      diagnostics->Error(location, key_path, "choice needs a non-empty list");
      continue;
    }
    if (kind != "uniform" && kind != "log_uniform" && kind != "choice") {
      diagnostics->Error(location, key_path, "unknown distribution '" + kind + "' (uniform, log_uniform, choice)");
      continue;
    }
    axis.keys.push_back(it.key());
    distributions.push_back({kind, arguments, location});
  }
  if (axis.keys.size() != axes.size()) return axis;
  SplitMix64 random(seed);
  for (int64_t sample = 0; sample < samples.get<int64_t>(); ++sample) {
    AxisPoint point;
    for (const Distribution& distribution : distributions) {
      const double u = random.Uniform();
      nlohmann::json value;
      if (distribution.kind == "uniform") {
        const double low = distribution.arguments[0], high = distribution.arguments[1];
        value = low + u * (high - low);
      } else if (distribution.kind == "log_uniform") {
        const double low = std::log(distribution.arguments[0].get<double>());
        const double high = std::log(distribution.arguments[1].get<double>());
        value = std::exp(low + u * (high - low));
      } else {
        const size_t count = distribution.arguments.size();
        value = distribution.arguments[std::min(count - 1, static_cast<size_t>(u * static_cast<double>(count)))];
      }
      point.values.push_back(value);
      point.locations.push_back(distribution.location);
      point.paths.push_back("");
    }
    axis.points.push_back(point);
  }
  return axis;
}

}  // namespace

SweepAxes ParseSweepAxes(const nlohmann::json* block, const ConfigDocument& document, const ExpansionLimits& limits,
                         SpecDiagnostics* diagnostics) {
  SweepAxes axes;
  if (block == nullptr) return axes;
  if (!block->is_object()) {
    diagnostics->Error(document.Locate("sweep"), "sweep", "expected a mapping of dotted keys to lists of values");
    return axes;
  }
  for (auto it = block->begin(); it != block->end(); ++it) {
    const std::string path = "sweep." + it.key();
    if (it.key() == "zip") {
      if (!it.value().is_array()) {
        diagnostics->Error(document.Locate(path), path, "expected a list of zip groups");
        continue;
      }
      for (size_t index = 0; index < it.value().size(); ++index) {
        axes.axes.push_back(ParseZipAxis(it.value()[index], Indexed(path, index), document, diagnostics));
      }
    } else if (it.key() == "random") {
      axes.axes.push_back(ParseRandomAxis(it.value(), path, document, limits, diagnostics));
    } else {
      axes.axes.push_back(ParseListAxis(it.key(), it.value(), path, document, diagnostics));
    }
  }
  // A label names cells: a non-empty string, never a config value.
  for (const SweepAxis& axis : axes.axes) {
    for (size_t key = 0; key < axis.keys.size(); ++key) {
      if (axis.keys[key] != kLabelAxisKey) continue;
      for (const AxisPoint& point : axis.points) {
        const nlohmann::json& value = point.values[key];
        if (!value.is_string() || value.get<std::string>().empty()) {
          diagnostics->Error(point.locations[key], kLabelAxisKey,
                             "a label names the cell's arm: a non-empty string, got " + value.dump());
        }
      }
    }
  }
  // JSON mappings iterate in key order; the spec's order is the order of the text.
  std::stable_sort(axes.axes.begin(), axes.axes.end(),
                   [](const SweepAxis& a, const SweepAxis& b) { return LocationBefore(a.location, b.location); });
  return axes;
}

}  // namespace rung
