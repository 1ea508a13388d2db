// core/model/inverse_temperature.h
//
// The inverse-temperature schedules beta(n) of docs/science.md section 3 as a module: it owns the
// form's learned parameters (fp32; each form's model part, core/model/temperature/<name>.cc,
// registers its own) and returns, per layer, the multiplier of each query's logits from the number of
// keys n it sees ([..., T] in, [..., T, heads] out: n = i + 1 for query i, or the keys inside its
// document under ModelConfig::document_key_counts), or an undefined tensor when beta == 1 everywhere.
// The forms (rung-train --help lists them): none 1; log_power s (ln max(n,2) / ln n_ref)^xi; qwen
// max(1, ln n / ln n_ref)^xi; ssmax s_h ln n; learned s_lh beta[n] + b_lh.
#pragma once

#include <memory>
#include <vector>

#include <torch/torch.h>

#include "core/config/model_config.h"
#include "core/model/inverse_temperature_form_model.h"

namespace rung {

class InverseTemperatureImpl : public torch::nn::Module {
 public:
  explicit InverseTemperatureImpl(const ModelConfig& config);

  // Multipliers for queries that see `keys` keys ([T] or [B, T], float, each >= 1), one [..., heads]
  // tensor per layer (undefined: none).
  std::vector<torch::Tensor> Multipliers(const torch::Tensor& keys);
  // The same for positions 0..T-1, query i seeing i + 1 keys ([T, heads] per layer).
  std::vector<torch::Tensor> Multipliers(int64_t time, const torch::Device& device);

  std::vector<torch::Tensor> learned_parameters() const { return form_->learned_parameters(); }

  // The learned form's free table beta[n - 1] for n = 1..n_train (before the per-(layer, head) affine
  // map); undefined for every other form.
  torch::Tensor beta_table() const { return form_->beta_table(); }

 private:
  std::unique_ptr<InverseTemperatureFormModel> form_;  // the form's model part
};
TORCH_MODULE(InverseTemperature);

}  // namespace rung
