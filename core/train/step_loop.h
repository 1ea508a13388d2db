// core/train/step_loop.h
//
// The optimizer steps of a run and the step records that report them. One step draws
// train.grad_accum training batches of train.batch_size sequences, back-propagates each one's mean
// loss (a data-parallel rank: its shard's part of the global mean, data_parallel.h), sums the
// gradients over the ranks, clips them (the global norms of the backbone and of the positional
// parameters, separately) and steps AdamW at the learning rate of train.schedule. A non-finite loss
// or gradient norm fails the step before the optimizer moves.
//
// Throughput: each step record's tokens/s is over the steps since the record before; the run's
// train_tokens_per_sec leaves out the first kWarmupSteps steps of the process.
//
// Example:
//   StepLoop steps(trial, device, *source, model, *optimizer, *group, flops, progress);
//   RUNG_ASSIGN_OR_RETURN(StepResult step, steps.Step(progress));
//   records::StepRecord record = steps.StepRecordOf(step, progress);
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "core/common/status.h"
#include "core/config/model_arithmetic.h"
#include "core/config/trial_config.h"
#include "core/data/batch_source.h"
#include "core/model/transformer.h"
#include "core/records/trainer_records.h"
#include "core/train/data_parallel.h"
#include "core/train/flat_adamw.h"
#include "core/train/training_progress.h"

namespace rung {

// The optimizer of a trial: the model's parameter groups (decay, no_decay, positional,
// positional_freq, and lora where the model has adapters) with the train.* and position.* settings,
// the backbone (or its adapters) and the positional parameters in separate clip sets. Frozen groups
// (train.freeze_backbone, position.freeze, the backbone under train.lora) stop requiring gradients
// and are left out.
std::unique_ptr<FlatAdamW> MakeOptimizer(const TrialConfig& trial, Transformer& model);

struct StepResult {
  double loss = 0.0;                  // mean training loss of the step's (global) batch
  double grad_norm = 0.0;             // global gradient norm of the backbone, before clipping
  double positional_grad_norm = 0.0;  // of the positional parameters
  double lr_multiplier = 1.0;         // the schedule's, at this step
  bool stop_agreed = false;           // data-parallel: some rank was asked to stop (every rank agrees)
};

class StepLoop {
 public:
  // Steps after the first this many of a process count towards steady_tokens_per_sec() (first-touch
  // allocation and thread-pool start-up make the first few several times slower).
  static constexpr int64_t kWarmupSteps = 5;

  // Keeps references: each argument must outlive the loop. `start` is where this process starts.
  StepLoop(const TrialConfig& trial, const torch::Device& device, const BatchSource& source, Transformer& model,
           FlatAdamW& optimizer, DataParallelGroup& group, const FlopsPerToken& flops_per_token,
           const TrainingProgress& start);

  // One optimizer step from `progress`, which it advances (step, data_index, tokens).
  // Errors: ABORTED for a non-finite loss or gradient norm ("non-finite ... at step N", N the step
  // that failed: progress.step + 1, progress.step unchanged); UNAVAILABLE when the group's
  // all-reduce fails.
  StatusOr<StepResult> Step(TrainingProgress& progress);

  // The step record of `step`, which brought the run to `progress`: tokens/s since the previous one.
  records::StepRecord StepRecordOf(const StepResult& step, const TrainingProgress& progress);

  // Training tokens/s of this process after its warm-up steps (0 before any).
  double steady_tokens_per_sec() const;

 private:
  // The loss this rank back-propagates for one batch of the step.
  torch::Tensor BatchLoss(const TensorBatch& batch);

  const TrialConfig& trial_;
  const torch::Device device_;
  const BatchSource& source_;
  Transformer& model_;
  FlatAdamW& optimizer_;
  DataParallelGroup& group_;
  const FlopsPerToken flops_per_token_;
  const int64_t document_start_token_;
  const int64_t start_step_;
  double train_seconds_ = 0.0;   // in Step, this process
  double steady_seconds_ = 0.0;  // after the warm-up steps
  int64_t steady_tokens_ = 0;
  int64_t tokens_at_last_record_;
  double seconds_at_last_record_ = 0.0;
};

}  // namespace rung
