// sweeps/spec/sweep_spec.h
//
// A sweep spec: how a researcher states a study in one YAML file. The schema:
//
//   name: lerope-vs-rope                     # required; letters, digits, '-', '_', '.'
//   description: ...                         # optional
//   metric: {name: val_loss, goal: minimize}
//   baseline: {position.variant: rope}       # dotted keys selecting the cells fits compare against
//   seed: 0                                  # default trial seed
//   data / model / position / inverse_temperature / train / resources: trial-config defaults
//                                            # (the blocks rung-train reads; docs/cli.md lists their keys)
//   policy: {max_retries: 2, max_failed: 10, priority: 0}
//   ladder: ...                              # see ladder.h: explicit rungs or rules
//   sweep:                                   # see sweep_axes.h: axes over dotted keys
//     position.variant: [rope, lerope]
//     seed: [0, 1, 2]
//   tune: ...                                # see tune_spec.h: a key searched per tuning cell
//   early_stop: ...                          # see early_stop_spec.h
//   precision: ...                           # see precision_spec.h: seeds added until intervals are narrow
//
// ParseSweepSpec checks the spec's own structure (unknown keys with a suggestion, types); the
// trial-level checks happen per expanded cell (expansion.h). Every diagnostic names file:line:col.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/yaml_document.h"
#include "sweeps/spec/early_stop_spec.h"
#include "sweeps/spec/expansion_limits.h"
#include "sweeps/spec/ladder.h"
#include "sweeps/spec/precision_spec.h"
#include "sweeps/spec/spec_diagnostics.h"
#include "sweeps/spec/sweep_axes.h"
#include "sweeps/spec/tune_spec.h"

namespace rung {

struct PolicyConfig {
  int64_t max_retries = 2;   // attempts after a FAILED one, per trial
  int64_t max_failed = 10;   // trials FAILED for good before the sweep is FAILED
  int64_t priority = 0;      // higher leases first
};

struct MetricSpec {
  std::string name = "val_loss";
  std::string goal = "minimize";  // minimize | maximize
};

struct SweepSpec {
  std::string name;
  std::string description;
  MetricSpec metric;
  nlohmann::json baseline = nlohmann::json::object();  // dotted key -> value
  std::string baseline_location;
  nlohmann::json defaults = nlohmann::json::object();  // the trial blocks, as written
  PolicyConfig policy;
  Ladder ladder;
  SweepAxes axes;
  TuneSpec tune;            // tune_spec.h; tune.set = false: every cell runs as expanded
  EarlyStopSpec early_stop; // early_stop_spec.h
  PrecisionSpec precision;  // precision_spec.h; precision.set = false: the seeds are as written
};

// Parses the spec's structure, and refuses two axes, or an axis and a ladder rule, that set the same
// key (axis_conflicts.h). Appends errors (and warnings) to `diagnostics`; the returned spec is usable
// only when no error was added. `limits` bounds what parsing draws (random axes' samples).
SweepSpec ParseSweepSpec(const ConfigDocument& document, const ExpansionLimits& limits, SpecDiagnostics* diagnostics);

}  // namespace rung
