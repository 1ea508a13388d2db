// sweeps/spec/expansion.h
//
// Expands a sweep spec into its trials: every ladder rung x the product of the sweep axes. Each
// trial gets its resolved config with every default explicit, its parameter counts and FLOPs (from
// core's torch-free arithmetic), its tokens, and its identity hash (trial_identity.h).
//
// Order of precedence inside a cell: spec defaults < the rung's model/train keys < ladder rules
// (tokens_per_param, lr, batch_size; not where an axis sets the key) < sweep axes.
//
// Validation happens here, before anything is stored: every cell is parsed strictly and validated;
// errors are mapped back to the spec's file:line:col (the axis value, rung or default that put the
// offending value there) and reported all at once, each only once. A baseline that matches no cell
// is an error; two cells with the same effective model get a warning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/config/model_arithmetic.h"
#include "core/config/trial_config.h"
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
  int64_t TotalTokens() const;
};

// Errors: INVALID_ARGUMENT listing every problem with file:line:col.
StatusOr<ExpandedSweep> ExpandSweepSpec(const ConfigDocument& document);

// Reads (NOT_FOUND if missing), parses and expands a spec file; or spec text held in memory.
StatusOr<ExpandedSweep> LoadSweepSpec(const std::string& path);
StatusOr<ExpandedSweep> ExpandSweepSpecText(const std::string& text, const std::string& name);

}  // namespace rung
