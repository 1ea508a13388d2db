// core/config/model_arithmetic.h
//
// Parameter and FLOP arithmetic of a resolved ModelConfig (docs/science.md section 5), torch-free, so
// that sweeps/ and the coordinator compute the same numbers the trainer does. A test checks that
// total() equals the torch model's parameter count for every variant and shape.
//
// Conventions (the published ladder's): N_nonembedding counts the attention and MLP matrices of the
// blocks only (12 * layers * d_model^2 for an MHA GELU model); norms, positional parameters, the
// input embedding and the output head are counted separately. The learned absolute position table
// (position.variant absolute, [seq_len, d_model]) is an embedding parameter, as in GPT-2: counted
// in `embedding`, not in `positional` nor N_nonembedding, so the FLOPs of 6 N_nonembedding D do
// not change with it.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/config/model_config.h"

namespace rung {

// Every count is overflow-checked: when one of them, or the total, does not fit int64, `overflow` is
// set and the counts are 0 (ValidateTrialConfig refuses such a model, so a validated config never
// overflows).
struct ParameterCounts {
  bool overflow = false;
  int64_t attention = 0;    // Q, K, V, O projections of all layers
  int64_t mlp = 0;          // MLP matrices of all layers
  int64_t norms = 0;        // RMSNorm gains (blocks, QK-norm, final)
  int64_t positional = 0;   // learned positional and inverse-temperature parameters
  int64_t embedding = 0;    // input embedding: the token table, and the absolute position table
  int64_t output_head = 0;  // output projection (its product costs the same tied or not)
  bool head_tied = false;   // the output projection is the embedding: counted once in total()

  int64_t nonembedding() const { return attention + mlp; }
  int64_t matrix() const { return attention + mlp + output_head; }
  int64_t total() const { return attention + mlp + norms + positional + embedding + (head_tied ? 0 : output_head); }
};

ParameterCounts CountParameters(const ModelConfig& config);

// The counts as the provenance record states them: nonembedding, matrix, total and each part.
nlohmann::json ParameterCountsToJson(const ParameterCounts& counts);

// Learned positional parameters alone (also part of CountParameters().positional); 0 on overflow.
int64_t CountPositionalParameters(const ModelConfig& config);

// FLOPs per training token (forward and backward), in double (no overflow; 0 for the parameter
// terms when the counts overflow).
struct FlopsPerToken {
  double nonembedding = 0;  // 6 * N_nonembedding
  double attention = 0;     // 6 * layers * T * heads * head_dim (causal QK^T and AV)
  double matrix = 0;        // 6 * N_matrix (output head included)
  double total() const { return matrix + attention; }
};

FlopsPerToken CountFlopsPerToken(const ModelConfig& config);

}  // namespace rung
