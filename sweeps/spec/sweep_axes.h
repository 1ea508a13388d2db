// sweeps/spec/sweep_axes.h
//
// The `sweep` block: axes over dotted keys of the trial config, expanded as a cartesian product.
//
//   sweep:
//     position.variant: [rope, lerope, nope]          # one axis: a list of values
//     inverse_temperature:                            # values that are mappings merge into the block
//       - {form: none}
//       - {form: log_power, xi: 0.5}
//     seed: [0, 1, 2]
//     label: [a, b]                                   # names cells, sets no config key (below)
//     zip:                                            # zipped axes: lists of equal length, stepped
//       - {position.base: [10000, 500000], position.adarope.l_ref: [64, 256]}   #   together
//     random:                                         # seeded random draws, `samples` of them
//       samples: 4
//       seed: 0
//       axes:
//         train.lr: {log_uniform: [1e-4, 1e-2]}
//         train.weight_decay: {uniform: [0.0, 0.2]}
//         model.mlp: {choice: [gelu, swiglu]}
//
// Each axis contributes one factor to the product; a zip group and the random block are one axis
// each. Axis order is the spec's order (later axes vary fastest). No two axes may set one key
// (axis_conflicts.h).
//
// The key `label` (kLabelAxisKey), alone or in a zip group, names the arm of a study a cell belongs to
// ("yarn-tuned", "head-wise frozen") where its config keys do not say it (an evaluation whose arms
// differ only in the trial they start from): its values are non-empty strings, kept with the cell's
// assignments (rung results --group-by label, --against label=NAME) and in no trial config, so they
// are not part of a trial's identity.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/config/yaml_document.h"
#include "sweeps/spec/expansion_limits.h"
#include "sweeps/spec/spec_diagnostics.h"

namespace rung {

inline constexpr char kLabelAxisKey[] = "label";

// One setting of one axis: a value for each of the axis's keys, with where each was written.
struct AxisPoint {
  std::vector<nlohmann::json> values;
  std::vector<std::string> locations;
  // The spec path of each value ("sweep.inverse_temperature[1]"), so that a key inside a mapping
  // value is located at its own line; "" for values drawn by a random axis.
  std::vector<std::string> paths;
};

struct SweepAxis {
  std::string kind;               // "list", "zip" or "random"
  std::vector<std::string> keys;  // dotted trial-config keys
  std::vector<AxisPoint> points;
  std::string location;
};

struct SweepAxes {
  std::vector<SweepAxis> axes;

  // Number of cells per ladder rung (the product of the axes' sizes); nullopt when it overflows int64.
  std::optional<int64_t> CellsPerRung() const;
  // Every axis's keys, axis by axis in spec order (a zip axis: each of its keys).
  std::vector<std::string> Keys() const;
};

// Parses the spec's `sweep` mapping (null: no axes). A random axis with more samples than
// limits.max_trials is an error, and is not drawn.
SweepAxes ParseSweepAxes(const nlohmann::json* block, const ConfigDocument& document, const ExpansionLimits& limits,
                         SpecDiagnostics* diagnostics);

}  // namespace rung
