// core/model/absolute_position.h
//
// The learned absolute position embedding of docs/science.md section 13 (GPT-2's): a table
// [n_train, d_model] (n_train = the training length) whose row p is added to the token embedding at
// position p before the first block; no rotation, no bias. The transformer owns the table as its
// parameter "position_embedding" (an embedding parameter: no weight decay, the backbone's learning
// rate, counted in ParameterCounts::embedding); this file is the lookup.
//
// The table has no row past n_train - 1. For a longer sequence, position.absolute.beyond decides:
//   refuse  the lookup throws a c10::Error naming both lengths (inside rung-train, TrainTrial
//           reports it as a failed run; ValidateTrialConfig already refuses a config that would
//           evaluate there)
//   clamp   every position >= n_train uses the last row
#pragma once

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace rung {

// Standard deviation of the table's normal initialisation (GPT-2's).
inline constexpr double kAbsolutePositionInitStd = 0.02;

// The rows for positions 0..time-1 of `table` [n_train, d]: [time, d], differentiable in the table.
// `beyond`: "refuse" or "clamp" (above).
torch::Tensor AbsolutePositionRows(const torch::Tensor& table, int64_t time, const std::string& beyond);

}  // namespace rung
