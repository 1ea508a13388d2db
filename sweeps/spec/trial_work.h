// sweeps/spec/trial_work.h
//
// The full FLOP count of one trial as rung-train runs it, for time estimates (`rung validate`): not
// only the training steps (6 N_matrix D plus attention, ExpandedTrial::flops_total) but every forward
// pass the trainer makes besides them. Torch-free; the same arithmetic as the trainer's records
// (core/config/model_arithmetic.h): a forward pass costs a third of a training step per token.
//
//   training     flops_per_token.total() x steps x batch_size x grad_accum x seq_len; with the backbone
//                frozen (train.freeze_backbone) or adapted (train.lora) no weight gradients: the matrix
//                part two thirds of that (the adapters' own products, rank x width, left out)
//   evaluation   held-out evaluations: one every eval_every steps before the last (none with
//                eval_every 0) and one at the end, each eval_batches x batch_size x seq_len tokens
//                forward
//   extension    at the end, each evaluated (multiple m, method) beyond the training length
//                (rung-train's Evaluator: (1, none) included, other methods at 1 skipped): eval_batches
//                batches of max(1, batch_size / m) sequences of m x seq_len tokens forward, attention
//                per token m times the training length's
//   diagnostics  each milestone of diagnostics_at (with diagnostics_sequences > 0): a forward pass of
//                diagnostics_batches x diagnostics_sequences x seq_len tokens; for a rotary variant the
//                end's band ablations (1 + each pair zeroed and reverted) and, for AdaRoPE, the head
//                influence (at most 1 + 3 per head: an upper bound where units are shared), each of
//                diagnostics_sequences x seq_len
//   probe        train.probe: each (length L, method) of ProbeSettings, depths x instances prompts of L
//                tokens forward, attention per token L / seq_len times the training length's (the few
//                decoded tokens after each prompt are left out); an indexing probe: instances x queries
//                prompts of each list length, of EstimatedIndexingPromptTokens each (its defaults up to
//                the first that leaves data.seq_len)
// Fixed costs (process start, data loading, checkpoints, the diagnostics' own arithmetic) are not
// FLOPs: a calibration measures them as seconds per trial (coordinator/cli/calibration_cache.h).
#pragma once

#include "core/config/trial_config.h"

namespace rung {

struct TrialWork {
  double training = 0;
  double evaluation = 0;
  double extension = 0;
  double diagnostics = 0;
  double probe = 0;
  double total() const { return training + evaluation + extension + diagnostics + probe; }
};

// The FLOPs a training token costs this trial: flops_per_token.total(), or with the backbone frozen or
// adapted the matrix part's two thirds plus attention (the `training` line above). What a measured
// tokens/s is multiplied by to give the trainer's FLOP/s.
double TrainingFlopsPerToken(const TrialConfig& config);

// REQUIRES: a resolved, validated config (steps set).
TrialWork CountTrialWork(const TrialConfig& config);

// rung-train's achieved FLOP/s (matrix + attention) at kUncalibratedThreads threads, small shape
// (bench/README.md): the rate of every estimate that has nothing measured to go by (`rung validate`
// and `rung plan` without a calibration; the coordinator's fit of a CPU trial into a worker's
// allocation, coordinator/domain/allocation_fit.h, scaled by the trial's threads).
inline constexpr double kUncalibratedFlopsPerSec = 1.4e11;
inline constexpr int kUncalibratedThreads = 2;

}  // namespace rung
