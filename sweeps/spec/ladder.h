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
//
// Without a ladder block a spec has one rung: its defaults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/yaml_document.h"
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
};

// A value set per rung: a list (one per rung) or a power law of the rung's parameter count.
struct RungScaledValue {
  bool set = false;
  std::vector<double> per_rung;
  double coefficient = 0.0, exponent = 0.0;
  std::string location;

  double At(size_t rung, double parameters) const;
};

struct Ladder {
  std::vector<LadderRung> rungs;
  double tokens_per_param = 0.0;  // 0 = tokens or steps come from `train`
  std::string param_count = "total";
  RungScaledValue lr, batch_size;
};

// Parses `block` (the spec's ladder mapping, at key path "ladder"), or makes the single default
// rung when `block` is null.
Ladder ParseLadder(const nlohmann::json* block, const ConfigDocument& document, SpecDiagnostics* diagnostics);

}  // namespace rung
