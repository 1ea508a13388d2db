#include "core/train/flat_adamw.h"

#include <cmath>

#include "core/train/adamw_update.h"

namespace rung {

FlatAdamW::FlatAdamW(std::vector<FlatGroupSpec> specs, FlatAdamWOptions options) : options_(std::move(options)) {
  torch::NoGradGuard no_grad;
  for (FlatGroupSpec& spec : specs) {
    if (spec.params.empty()) continue;
    int64_t total = 0;
    for (const auto& param : spec.params) total += param.numel();
    auto tensor_options = spec.params.front().options().requires_grad(false);
    Group group;
    group.params = torch::empty({total}, tensor_options);
    group.grads = torch::zeros({total}, tensor_options);
    group.exp_avg = torch::zeros({total}, tensor_options);
    group.exp_avg_sq = torch::zeros({total}, tensor_options);
    int64_t offset = 0;
    for (auto& param : spec.params) {
      const int64_t count = param.numel();
      auto slot = group.params.narrow(0, offset, count).view(param.sizes());
      slot.copy_(param);
      param.set_data(slot);
      param.mutable_grad() = group.grads.narrow(0, offset, count).view(param.sizes());
      offset += count;
    }
    group.spec = std::move(spec);
    groups_.push_back(std::move(group));
  }
}

void FlatAdamW::ZeroGrad() {
  for (Group& group : groups_) group.grads.zero_();
}

std::vector<double> FlatAdamW::ClipGradients() {
  torch::NoGradGuard no_grad;
  const size_t sets = options_.clip_max_norm.size();
  std::vector<double> squared(sets, 0.0);
  for (const Group& group : groups_) {
    double norm = group.grads.norm().item<double>();
    squared.at(group.spec.clip_set) += norm * norm;
  }
  std::vector<double> norms(sets);
  for (size_t set = 0; set < sets; ++set) {
    norms[set] = std::sqrt(squared[set]);
    const double max_norm = options_.clip_max_norm[set];
    if (max_norm <= 0.0 || !std::isfinite(norms[set])) continue;
    const double coefficient = max_norm / (norms[set] + 1e-6);
    if (coefficient >= 1.0) continue;
    for (Group& group : groups_) {
      if (group.spec.clip_set == static_cast<int>(set)) group.grads.mul_(coefficient);
    }
  }
  return norms;
}

void FlatAdamW::Step(double schedule_multiplier) {
  torch::NoGradGuard no_grad;
  ++step_count_;
  const double bias1 = 1.0 - std::pow(options_.beta1, static_cast<double>(step_count_));
  const double bias2 = 1.0 - std::pow(options_.beta2, static_cast<double>(step_count_));
  for (Group& group : groups_) {
    AdamWCoefficients c;
    c.lr = options_.lr * group.spec.lr_mult * schedule_multiplier;
    if (group.spec.weight_decay > 0.0) {
      c.decay = options_.independent_weight_decay ? group.spec.weight_decay * schedule_multiplier
                                                  : c.lr * group.spec.weight_decay;
    }
    c.beta1 = options_.beta1;
    c.beta2 = options_.beta2;
    c.eps = options_.eps;
    c.bias1 = bias1;
    c.bias2 = bias2;
    AdamWUpdate(group.params, group.grads, group.exp_avg, group.exp_avg_sq, c);
  }
}

std::vector<torch::Tensor> FlatAdamW::GradientBuffers() const {
  std::vector<torch::Tensor> buffers;
  for (const Group& group : groups_) buffers.push_back(group.grads);
  return buffers;
}

std::vector<torch::Tensor> FlatAdamW::StateBuffers() const {
  std::vector<torch::Tensor> buffers;
  for (const Group& group : groups_) {
    buffers.push_back(group.params);
    buffers.push_back(group.exp_avg);
    buffers.push_back(group.exp_avg_sq);
  }
  return buffers;
}

}  // namespace rung
