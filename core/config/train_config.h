// core/config/train_config.h
//
// How a trial trains (the `train` and `resources` blocks): optimizer, schedule, cadence, threads.
// Plain data, torch-free. Cadence and thread settings do not change results and are left out of a
// trial's identity by sweeps/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config_error.h"

namespace rung {

struct ScheduleConfig {
  std::string name = "cosine";     // cosine | wsd | constant
  int64_t warmup_steps = 100;
  double decay_fraction = 0.1;     // wsd: share of steps in the final linear decay
  double final_lr_fraction = 0.0;  // LR at the last step, relative to the peak
};

// Starting a run from another trial's checkpoint (docs/science.md sections 2 and 9): context extension
// (parameters: all, longer data.seq_len, train.freeze_backbone) or fixed learned frequencies
// (parameters: positional, position.freeze). The coordinator fills `checkpoint` from a named source
// trial; rung-train takes a path.
struct InitConfig {
  // A checkpoint file, or a folder of checkpoints (its newest is used); "" = a fresh initialisation.
  std::string checkpoint;
  // The trial whose final checkpoint to start from, as "<sweep name>/<trial index>" or
  // "id:<identity prefix>": a spec names it, the coordinator resolves it into `checkpoint` at
  // submission (the source must have SUCCEEDED). rung-train itself only reads `checkpoint`.
  std::string from_trial;
  std::string parameters = "all";     // all | positional | backbone: which parameters are copied
};

struct TrainConfig {
  int64_t steps = 0;               // optimizer steps; 0 = derived from tokens
  int64_t tokens = 0;              // training tokens D; used when steps == 0
  int64_t batch_size = 32;         // sequences per micro-batch
  int64_t grad_accum = 1;          // micro-batches per optimizer step
  double lr = 3e-3;                // peak learning rate of the backbone
  double weight_decay = 0.1;
  std::string weight_decay_mode = "coupled";  // coupled (AdamW: lr*wd) | independent (wd * schedule)
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double clip = 1.0;               // global-norm clip of the backbone (0 = none)
  bool freeze_backbone = false;    // train only the positional parameters
  ScheduleConfig schedule;
  InitConfig init;
  int64_t eval_every = 100;        // 0 = only at the end
  int64_t eval_batches = 8;
  int64_t log_every = 10;
  int64_t checkpoint_every = 0;    // 0 = only on signal and at the end
  int64_t keep_checkpoints = 2;
  // Evaluation beyond the training length at the end of a run (docs/science.md section 9): each
  // multiple m of the training length, with each inference-time extension (none, pi = position
  // interpolation, ntk_by_parts, yarn = NTK-by-parts plus the (0.1 ln m + 1)^2 logit factor).
  std::vector<int64_t> extrapolation_multiples;
  std::vector<std::string> extrapolation_methods = {"none"};
  // Attention diagnostics (docs/science.md section 7) at the end of a run, on this many validation
  // sequences (0 = none); written as the `diagnostics` record.
  int64_t diagnostics_sequences = 4;
  double diagnostics_renyi_order = 2.0;  // r of the effective attention length E_r (> 1; 2: E_2 = 1/sum a^2)
  std::string device = "cpu";      // cpu | cuda
  std::string precision = "fp32";  // fp32 | bf16 (autocast on CUDA; positional parameters stay fp32)
};

struct ResourcesConfig {
  int64_t cpus = 1;                // CPU threads of the trainer
  int64_t gpus = 0;
  int64_t world_size = 1;
};

// Tokens per optimizer step. REQUIRES: a validated config (ValidateTrialConfig refuses one whose
// tokens per step, or steps x tokens per step, overflow int64).
inline int64_t TokensPerStep(const TrainConfig& train, int64_t seq_len) {
  return train.batch_size * train.grad_accum * seq_len;
}

void ValidateTrainConfig(const TrainConfig& train, const ResourcesConfig& resources,
                         std::vector<ConfigError>* errors);

}  // namespace rung
