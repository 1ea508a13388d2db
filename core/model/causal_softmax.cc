#include "core/model/causal_softmax.h"

#include <limits>

namespace rung {

torch::Tensor CausalSoftmax(const torch::Tensor& scores, int64_t time, int64_t kv_heads,
                            const torch::Tensor& alibi_slopes) {
  TORCH_CHECK(scores.dim() == 3 && scores.size(2) == time && scores.size(1) % time == 0,
              "CausalSoftmax: scores must be [B * kv_heads, g * T, T]");
  const int64_t slabs = scores.size(0), rows = scores.size(1), groups = rows / time;
  auto options = scores.options().requires_grad(false);
  auto positions = torch::arange(time, options);
  auto distance = (positions.view({time, 1}) - positions.view({1, time})).repeat({groups, 1});  // [g*T, T]: i - j
  auto bias = torch::zeros({rows, time}, options).masked_fill(distance < 0, -std::numeric_limits<double>::infinity());
  torch::Tensor biased = scores + bias.unsqueeze(0);
  if (alibi_slopes.defined()) {
    // slope of head (n % kv) * g + r / T, laid out [kv, g*T, 1], repeated over the batch
    auto per_row = alibi_slopes.to(options).view({kv_heads, groups, 1}).expand({kv_heads, groups, time}).reshape({kv_heads, rows, 1});
    biased = biased - (per_row * distance.clamp_min(0).unsqueeze(0)).repeat({slabs / kv_heads, 1, 1});
  }
  return torch::softmax(biased, -1);
}

}  // namespace rung
