// sweeps/spec/early_stop_spec.h
//
// The `early_stop` block: when the coordinator ends a trial before its last step, from the
// evaluations stored for it (sweeps/tune/early_stopping.h decides; the trial ends EARLY_STOPPED,
// never FAILED).
//
//   early_stop:
//     divergence: {factor: 1.5}          # stop a trial whose evaluation exceeds 1.5x its first one
//     asha: {metric: val_loss, reduction: 3, at: [0.25, 0.5]}
//                                        # successive halving among one tuning cell's trials: at each
//                                        # fraction of training, keep the best 1/reduction of those
//                                        # that reached it (only where at least `reduction` did)
//
// Every error names file:line:col.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/yaml_document.h"
#include "sweeps/spec/spec_diagnostics.h"

namespace rung {

struct DivergenceStop {
  double factor = 1.5;  // > 1
};

struct AshaStop {
  std::string metric = "val_loss";   // a step metric the trainer evaluates (lower is better)
  int64_t reduction = 3;             // >= 2
  std::vector<double> at = {0.25, 0.5};  // increasing fractions of training in (0, 1)
};

struct EarlyStopSpec {
  std::optional<DivergenceStop> divergence;
  std::optional<AshaStop> asha;
  bool any() const { return divergence.has_value() || asha.has_value(); }
};

// Parses the spec's `early_stop` block (key path "early_stop"); null: none.
EarlyStopSpec ParseEarlyStopSpec(const nlohmann::json* block, const ConfigDocument& document,
                                 SpecDiagnostics* diagnostics);

}  // namespace rung
