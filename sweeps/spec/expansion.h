// sweeps/spec/expansion.h
//
// Expands a sweep spec into its trials: every ladder rung x the product of the sweep axes. Each
// trial gets its resolved config with every default explicit, its parameter counts and FLOPs (from
// core's torch-free arithmetic), its tokens, and its identity hash (trial_identity.h).
//
// Order of precedence inside a cell: spec defaults < the rung's model/train keys < ladder rules
// (tokens_per_param, lr, batch_size) < sweep axes. An axis may not set a key a ladder rule or
// another axis sets (axis_conflicts.h). An IsoFLOP rung's train.steps (ladder.h, isoflop_budgets)
// is set last, from the cell's model, batch and sequence length with everything else applied.
//
// The number of trials (rungs x cells per rung) is checked against ExpansionLimits before any cell
// is built (expansion_limits.h); a spec over the limit is refused with its count, the limit and how
// to raise it, and nothing else is expanded.
//
// Validation happens here, before anything is stored: every cell is parsed strictly and validated;
// errors are mapped back to the spec's file:line:col (the axis value, rung or default that put the
// offending value there) and reported all at once, each only once. A baseline that matches no cell
// is an error; two cells with the same effective model get a warning.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/config/model_arithmetic.h"
#include "core/config/trial_config.h"
#include "sweeps/spec/expansion_limits.h"
#include "sweeps/spec/sweep_spec.h"

namespace rung {

struct ExpandedTrial {
  int64_t index = 0;
  int64_t rung = 0;
  std::string rung_label;
  nlohmann::json assignments = nlohmann::json::object();  // axis key -> this cell's value
  TrialConfig config;
  nlohmann::json config_json;  // TrialConfigToJson(config): every default explicit
  std::string identity;        // hex SHA-256
  ParameterCounts parameters;
  int64_t tokens = 0;          // training tokens D
  double flops = 0;            // 6 N_nonembedding D (the convention fits use)
  double flops_total = 0;      // (6 N_matrix + attention) D
  bool baseline = false;
};

struct ExpandedSweep {
  SweepSpec spec;
  std::vector<ExpandedTrial> trials;
  std::vector<SpecDiagnostic> warnings;

  double TotalFlops() const;       // sum of 6 N D
  double TotalFlopsAll() const;    // sum of flops_total
  double TotalTokens() const;      // a double: the trials' sum can exceed int64
};

// Errors: INVALID_ARGUMENT listing every problem with file:line:col. With a `tune` block the trials
// are the cells before the search (the tuned key at its expanded value): sweeps/tune/lr_search.h
// plans which values of it run.
StatusOr<ExpandedSweep> ExpandSweepSpec(const ConfigDocument& document, const ExpansionLimits& limits = {});

// `base` with the numeric config key `key` set to `value` (after every default, rung and rule) and
// recorded in its assignments: config, identity and counts recomputed. INVALID_ARGUMENT with the
// trial parser's message when the value is not valid there.
StatusOr<ExpandedTrial> ExpandTrialWithValue(const ExpandedTrial& base, const std::string& key, double value);
// The same for any JSON value (an integer seed: ExpandTrialWithAssignment(base, "seed", 7)).
StatusOr<ExpandedTrial> ExpandTrialWithAssignment(const ExpandedTrial& base, const std::string& key,
                                                  const nlohmann::json& value);

// Reads (NOT_FOUND if missing), parses and expands a spec file; or spec text held in memory.
StatusOr<ExpandedSweep> LoadSweepSpec(const std::string& path, const ExpansionLimits& limits = {});
StatusOr<ExpandedSweep> ExpandSweepSpecText(const std::string& text, const std::string& name,
                                            const ExpansionLimits& limits = {});

}  // namespace rung
