// sweeps/spec/ladder.h
//
// The `ladder` block: the model sizes of a study, co-scaled (docs/science.md section 4).
//
//   ladder:                                  # explicit rungs: any `model` keys, plus
//     rungs:                                 #   label (default "L<layers>-d<d_model>") and
//       - {layers: 2, d_model: 32}           #   train: {...} overrides for that rung
//       - {layers: 4, d_model: 64, train: {lr: 2e-3}}
//   ladder:                                  # or rules: fixed head dim, heads and width from depth
//     depths: [2, 3, 4, 6]
//     head_dim: 16
//     heads_per_layer: 1.0                   # heads = max(1, round(ratio * layers)); published 4/3
//   # with either form:
//     tokens_per_param: 20                   # train.tokens = ratio * N
//     param_count: total                     # total | nonembedding (positional parameters never
//                                            # count, so every variant of a rung sees the same tokens)
//     lr: [3e-3, 2e-3, 1e-3]                 # per rung, or {coefficient: c, exponent: e}: c * N^e
//     batch_size: [32, 32, 64]               # the same two forms (rounded)
//   # or, instead of tokens_per_param, an IsoFLOP grid (Chinchilla's approach 2):
//     isoflop_budgets: [1.0e11, 3.0e11, 1.0e12]   # training FLOPs, 6 N_nonembedding D
//
// isoflop_budgets: every model size (each `rungs` entry or depth) x every budget is one rung, in size
// order then the budgets' order as written, labelled "<size label>-C<budget>" (L2-d32-C3e11,
// L2-d32-C1.5e11: the budget's shortest exact mantissa, isoflop.h). Each of its trials gets the
// whole number of train.steps whose FLOPs, 6 N_nonembedding x steps x batch_size x grad_accum x
// seq_len as the trial records them (trials.flops), lie nearest the budget, N that of the trial's
// own model (every axis applied: a variant with other nonembedding counts gets its own steps). A
// trial that no whole number of steps brings within 1% of its budget is an error at the budget
// (too few steps: a smaller batch_size or seq_len, or a larger budget). Budgets are finite, > 0 and
// distinct, at most 64. They set train.steps and train.tokens, so tokens_per_param, a sweep axis or
// a rung's `train:` that sets either is an error naming both; a list of lr or batch_size has one
// value per model size.
//
// Without a ladder block a spec has one rung: its defaults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/yaml_document.h"
#include "sweeps/spec/expansion_limits.h"
#include "sweeps/spec/spec_diagnostics.h"

namespace rung {

struct LadderRung {
  std::string label;
  nlohmann::json model = nlohmann::json::object();  // `model` keys of this rung
  nlohmann::json train = nlohmann::json::object();  // `train` overrides of this rung
  std::string location;
  // The rung's mapping in the spec ("ladder.rungs[1]"), where each of its keys is located; "" for a
  // rung the ladder's rules built.
  std::string path;
  size_t size = 0;             // its model size: the index of its `rungs` entry or depth
  double isoflop_budget = 0;   // its training FLOPs (isoflop_budgets); 0 = none
  std::string budget_path;     // "ladder.isoflop_budgets[2]", where the budget is written
};

// A value set per rung: a list (one per rung) or a power law of the rung's parameter count.
struct RungScaledValue {
  bool set = false;
  std::vector<double> per_rung;
  double coefficient = 0.0, exponent = 0.0;
  std::string location;

  // The value of the rung of model size `size` (LadderRung::size).
  double At(size_t size, double parameters) const;
};

struct Ladder {
  std::vector<LadderRung> rungs;
  double tokens_per_param = 0.0;  // 0 = tokens or steps come from `train`
  std::string param_count = "total";
  RungScaledValue lr, batch_size;
  std::vector<double> isoflop_budgets;  // empty = no IsoFLOP grid
};

// Parses `block` (the spec's ladder mapping, at key path "ladder"), or makes the single default
// rung when `block` is null. An IsoFLOP grid of more rungs than limits.max_trials is refused before
// it is built (no rungs).
Ladder ParseLadder(const nlohmann::json* block, const ConfigDocument& document, const ExpansionLimits& limits,
                   SpecDiagnostics* diagnostics);

}  // namespace rung
