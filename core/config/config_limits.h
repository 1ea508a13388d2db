// core/config/config_limits.h
//
// The ceilings of a trial config: values beyond them would make rung-train allocate memory no
// machine has (or make an integer product overflow), so validation refuses them before anything
// runs, rather than a trainer failing hours into a run. They rule out the absurd, not what a given
// machine can hold: exact attention on CPU keeps [batch, heads, T, T] floats, far below these
// lengths in practice. Fixed: raising one means changing this file (and checking the trainer).
//
//   data.seq_len, and data.seq_len x each train.extrapolation_multiples entry   <= 1,048,576 tokens
//   train.batch_size x data.seq_len (one micro-batch; larger batches: grad_accum),
//   train.diagnostics_batches x diagnostics_sequences x data.seq_len (x each
//     train.diagnostics_multiples entry, whose evaluated length also <= 1,048,576)  <= 16,777,216 tokens
//   model.layers <= 1,024; model.d_model <= 65,536; model.mlp_hidden <= 262,144
//   model.vocab_size, data.vocab_size and the synthetic tasks' symbol counts     <= 16,777,216
//   total parameters (CountParameters)                                           <= 100,000,000,000
//   resources.cpus, resources.gpus, resources.world_size                         <= 4,096
//   training tokens steps x batch_size x grad_accum x seq_len                    must fit int64
//   each optimiser group's lr / (1 - beta1), and train.lr x train.weight_decay     must fit float32
//     (every real of the config must too: core/config/config_number_range.h)
//
// Thread safety: constants and a pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/config_error.h"
#include "core/config/trial_config.h"

namespace rung {

inline constexpr int64_t kMaxSequenceLength = int64_t{1} << 20;
inline constexpr int64_t kMaxTokensPerBatch = int64_t{1} << 24;
inline constexpr int64_t kMaxLayers = 1024;
inline constexpr int64_t kMaxModelWidth = int64_t{1} << 16;
inline constexpr int64_t kMaxMlpHidden = int64_t{1} << 18;
inline constexpr int64_t kMaxVocabSize = int64_t{1} << 24;
inline constexpr int64_t kMaxParameters = 100'000'000'000;
inline constexpr int64_t kMaxResourceCount = 4096;

// Appends one ConfigError (path and message with the value and the limit) per value above a
// ceiling or product that overflows. Products are checked only when their factors are positive
// (the other validators report those). Call on a resolved config.
void ValidateConfigLimits(const TrialConfig& trial, std::vector<ConfigError>* errors);

// Appends an error at `path` when `value` is above `limit`: "<what> must be <= <limit>, got <value>".
// Returns whether it is within the limit.
bool CheckAtMost(const std::string& path, const std::string& what, int64_t value, int64_t limit,
                 std::vector<ConfigError>* errors);

}  // namespace rung
