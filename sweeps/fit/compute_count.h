// sweeps/fit/compute_count.h
//
// Which count of training FLOPs a fit's compute axis uses (docs/science.md section 5). The count
// changes the spacing of a ladder in ln C, and with it every multiplier, so a fit names its count:
//   nonembedding  6 N_nonembedding D (the default; the trials.flops column)
//   matrix        6 N_matrix D (every matrix parameter, the output head included)
//   total         matrix + the causal attention term 6 layers T heads head_dim per token
// The counts come from core/config/model_arithmetic.h, so the trainer, `rung validate` and the fits
// agree.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(ComputeCount count, ParseComputeCount("matrix"));
//   RUNG_ASSIGN_OR_RETURN(double flops, TrainingCompute(count, trial_config_json, tokens));
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace rung::fit {

enum class ComputeCount { kNonembedding, kMatrix, kTotal };

// "" and "nonembedding" -> kNonembedding; "matrix"; "total". INVALID_ARGUMENT naming the choices otherwise.
StatusOr<ComputeCount> ParseComputeCount(const std::string& name);
std::string ComputeCountName(ComputeCount count);
// The formula as a reader sees it, e.g. "6 N_nonembedding D".
std::string ComputeCountFormula(ComputeCount count);

// The count's training FLOPs of a trial from its resolved config (the JSON rung-train reads) and its
// training tokens. INVALID_ARGUMENT when the config does not parse as a trial config.
StatusOr<double> TrainingCompute(ComputeCount count, const nlohmann::json& trial_config, int64_t tokens);

}  // namespace rung::fit
