#include "core/config/train_config.h"

namespace rung {

void ValidateTrainConfig(const TrainConfig& t, const ResourcesConfig& r, std::vector<ConfigError>* errors) {
  auto error = [&](const std::string& path, const std::string& message) { errors->push_back({path, message}); };
  if (t.steps <= 0) error("train.steps", "must be positive (or give train.tokens)");
  if (t.steps < 0 || t.tokens < 0) error("train.tokens", "must be >= 0");
  if (t.batch_size <= 0) error("train.batch_size", "must be positive");
  if (t.grad_accum <= 0) error("train.grad_accum", "must be positive");
  if (!(t.lr > 0.0)) error("train.lr", "must be positive");
  if (!(t.weight_decay >= 0.0)) error("train.weight_decay", "must be >= 0");
  if (!(t.beta1 >= 0.0 && t.beta1 < 1.0)) error("train.beta1", "must lie in [0, 1)");
  if (!(t.beta2 >= 0.0 && t.beta2 < 1.0)) error("train.beta2", "must lie in [0, 1)");
  if (!(t.eps > 0.0)) error("train.eps", "must be positive");
  if (!(t.clip >= 0.0)) error("train.clip", "must be >= 0 (0 = no clipping)");
  if (t.schedule.warmup_steps < 0) error("train.schedule.warmup_steps", "must be >= 0");
  if (!(t.schedule.decay_fraction >= 0.0 && t.schedule.decay_fraction <= 1.0)) {
    error("train.schedule.decay_fraction", "must lie in [0, 1]");
  }
  if (!(t.schedule.final_lr_fraction >= 0.0 && t.schedule.final_lr_fraction <= 1.0)) {
    error("train.schedule.final_lr_fraction", "must lie in [0, 1]");
  }
  if (t.eval_every < 0) error("train.eval_every", "must be >= 0");
  if (t.eval_batches <= 0) error("train.eval_batches", "must be positive");
  if (t.log_every <= 0) error("train.log_every", "must be positive");
  if (t.checkpoint_every < 0) error("train.checkpoint_every", "must be >= 0");
  if (t.keep_checkpoints < 1) error("train.keep_checkpoints", "must be >= 1");
  if (t.precision == "bf16" && t.device != "cuda") error("train.precision", "bf16 needs device: cuda");
  for (int64_t multiple : t.extrapolation_multiples) {
    if (multiple < 1) error("train.extrapolation_multiples", "multiples must be >= 1, got " + std::to_string(multiple));
  }
  if (!t.extrapolation_multiples.empty() && t.extrapolation_methods.empty()) {
    error("train.extrapolation_methods", "give at least one method (none, pi, ntk_by_parts, yarn)");
  }
  if (t.diagnostics_sequences < 0) error("train.diagnostics_sequences", "must be >= 0 (0 = no diagnostics)");
  if (!(t.diagnostics_renyi_order > 1.0)) {
    error("train.diagnostics_renyi_order", "must be > 1 (the order r of E_r; 2 gives E_2 = 1 / sum a^2)");
  }
  if (r.cpus < 1) error("resources.cpus", "must be >= 1");
  if (r.gpus < 0) error("resources.gpus", "must be >= 0");
  if (r.world_size < 1) error("resources.world_size", "must be >= 1");
  if (r.world_size > 1 && t.batch_size > 0 && t.batch_size % r.world_size != 0) {
    error("resources.world_size", "must divide train.batch_size (" + std::to_string(t.batch_size) +
                                      "): each rank trains on an equal share of every batch");
  }
}

}  // namespace rung
