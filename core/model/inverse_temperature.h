// core/model/inverse_temperature.h
//
// The inverse-temperature schedules beta(n) of docs/science.md section 3, as a module that owns their
// learned parameters (fp32) and returns, per layer, the multiplier of each query's logits from the
// number of keys n it sees ([..., T] in, [..., T, heads] out: n = i + 1 for query i, or the keys inside
// its document under ModelConfig::document_key_counts), or an undefined tensor when beta == 1 everywhere.
//
//   none       1
//   log_power  s (ln(max(n,2)) / ln n_ref)^xi; s fixed, or learned per (layer, head) init s
//   qwen       max(1, ln n / ln n_ref)^xi   (n_ref = the training length by default)
//   ssmax      s_h ln n, s_h learned per (layer, head), init 1/ln n_ref
//   learned    s_lh * beta[n] + b_lh with beta[1..n_train] learned (init 1), s init 1, b init 0;
//              beyond n_train beta holds its last value ("hold") or follows c (ln n)^k fitted by
//              least squares to its second half ("power_law")
#pragma once

#include <vector>

#include <torch/torch.h>

#include "core/config/model_config.h"

namespace rung {

class InverseTemperatureImpl : public torch::nn::Module {
 public:
  explicit InverseTemperatureImpl(const ModelConfig& config);

  // Multipliers for queries that see `keys` keys ([T] or [B, T], float, each >= 1), one [..., heads]
  // tensor per layer (undefined: none).
  std::vector<torch::Tensor> Multipliers(const torch::Tensor& keys);
  // The same for positions 0..T-1, query i seeing i + 1 keys ([T, heads] per layer).
  std::vector<torch::Tensor> Multipliers(int64_t time, const torch::Device& device);

  std::vector<torch::Tensor> learned_parameters() const;

  // The learned form's free table beta[n - 1] for n = 1..n_train (before the per-(layer, head) affine
  // map); undefined for every other form.
  torch::Tensor beta_table() const { return beta_; }

 private:
  torch::Tensor LearnedBeta(int64_t time, const torch::Device& device);  // [T]

  ModelConfig config_;
  torch::Tensor scale_;   // [layers, heads]: log_power s, ssmax s_h, learned s
  torch::Tensor offset_;  // [layers, heads]: learned b
  torch::Tensor beta_;    // [n_train]: learned beta[n], index n-1
};
TORCH_MODULE(InverseTemperature);

}  // namespace rung
