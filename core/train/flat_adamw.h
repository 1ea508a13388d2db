// core/train/flat_adamw.h
//
// AdamW over parameter groups whose parameters and gradients are flattened into one contiguous
// buffer per group: every parameter becomes a view of its group's buffer (and its .grad() a view of
// the group's gradient buffer), so zeroing, global-norm clipping and the update are a handful of
// operations per group instead of several per tensor.
//
// Each group has its own learning-rate multiplier, weight decay and clip set: groups in the same
// clip set are clipped together to that set's max norm (the backbone and the positional
// parameters clip separately, docs/science.md section 2). Update, per group, with lr = base_lr *
// lr_mult * schedule:
//   coupled decay:     p -= lr * wd * p        independent decay: p -= wd * schedule * p
//   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr * m_hat / (sqrt(v_hat) + eps)
//
// Contract: construct after the model is on its device and before the first backward. The
// optimizer holds the buffers; parameters stay valid views as long as it lives. Not thread-safe.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

namespace rung {

struct FlatGroupSpec {
  std::string name;
  std::vector<torch::Tensor> params;
  double lr_mult = 1.0;
  double weight_decay = 0.0;
  int clip_set = 0;  // groups sharing a clip set are clipped together
};

struct FlatAdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  bool independent_weight_decay = false;
  std::vector<double> clip_max_norm;  // per clip set; 0 = no clipping
};

class FlatAdamW {
 public:
  FlatAdamW(std::vector<FlatGroupSpec> groups, FlatAdamWOptions options);

  void ZeroGrad();
  // Global gradient norm of each clip set before clipping; scales gradients in place.
  std::vector<double> ClipGradients();
  void Step(double schedule_multiplier);

  int64_t step_count() const { return step_count_; }
  void set_step_count(int64_t step_count) { step_count_ = step_count; }
  // Each group's gradient buffer (what a data-parallel step all-reduces: one tensor per group).
  std::vector<torch::Tensor> GradientBuffers() const;
  // Each group's parameter, first-moment and second-moment buffers (what a data-parallel run
  // broadcasts from rank 0 at the start, so that every rank steps from the same state).
  std::vector<torch::Tensor> StateBuffers() const;

  // The groups (those with parameters, in the order of the specs) and each one's first and second
  // moments: the optimizer state a checkpoint holds with step_count() (core/train/checkpoint_io.h).
  // The moments are the optimizer's own buffers: copying into them restores a state.
  int64_t num_groups() const { return static_cast<int64_t>(groups_.size()); }
  const std::string& group_name(int64_t index) const { return groups_[index].spec.name; }
  const torch::Tensor& exp_avg(int64_t index) const { return groups_[index].exp_avg; }
  const torch::Tensor& exp_avg_sq(int64_t index) const { return groups_[index].exp_avg_sq; }

 private:
  struct Group {
    FlatGroupSpec spec;
    torch::Tensor params, grads, exp_avg, exp_avg_sq;
  };
  std::vector<Group> groups_;
  FlatAdamWOptions options_;
  int64_t step_count_ = 0;
};

}  // namespace rung
