// core/train/autocast_scope.h
//
// The precision of the trainer's forward passes: train.precision bf16 on CUDA runs them under
// LibTorch's autocast (matrix products in bf16; positional parameters, angles and the loss stay
// fp32); everything else runs in fp32.
//
// Example:
//   AutocastScope autocast(UsesAutocast(trial));
//   torch::Tensor logits = model->forward(inputs, doc_start);
#pragma once

#include "core/config/trial_config.h"

namespace rung {

// True when the trial's forward passes run under bf16 autocast (train.precision bf16 on cuda).
bool UsesAutocast(const TrialConfig& trial);

// bf16 autocast on CUDA for the forward passes of a scope while `enabled`; a no-op otherwise.
class AutocastScope {
 public:
  explicit AutocastScope(bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
};

}  // namespace rung
