#include "core/model/causal_softmax.h"

#include <limits>

namespace rung {

torch::Tensor MaskedKeys(int64_t time, const torch::Tensor& doc_start, const torch::Device& device) {
  auto positions = torch::arange(time, torch::TensorOptions(device).dtype(torch::kLong));
  auto keys = positions.view({1, 1, time});
  auto masked = keys > positions.view({1, time, 1});                             // [1, T, T]: j > i
  if (doc_start.defined()) masked = masked | (keys < doc_start.unsqueeze(2));  // [B, T, T]: or j < s_i
  return masked.unsqueeze(1);
}

torch::Tensor CausalSoftmax(const torch::Tensor& scores, int64_t time, int64_t kv_heads,
                            const torch::Tensor& alibi_slopes, const torch::Tensor& doc_start) {
  TORCH_CHECK(scores.dim() == 3 && scores.size(2) == time && scores.size(1) % time == 0 &&
                  scores.size(0) % kv_heads == 0,
              "CausalSoftmax: scores must be [B * kv_heads, g * T, T]");
  const int64_t batch = scores.size(0) / kv_heads, groups = scores.size(1) / time;
  torch::Tensor biased = scores.reshape({batch, kv_heads, groups, time, time});
  if (alibi_slopes.defined()) {
    auto positions = torch::arange(time, scores.options().dtype(torch::kLong));
    auto distance = (positions.view({time, 1}) - positions.view({1, time})).clamp_min(0);  // i - j
    // head (n % kv_heads) * g + r / T: the slopes [heads] viewed as [kv_heads, g]
    auto slopes = alibi_slopes.to(scores.device(), scores.scalar_type()).view({1, kv_heads, groups, 1, 1});
    biased = biased - slopes * distance.to(scores.scalar_type());
  }
  auto masked = MaskedKeys(time, doc_start, scores.device()).unsqueeze(1);  // [B or 1, 1, 1, T, T]
  biased = biased.masked_fill(masked, -std::numeric_limits<double>::infinity());
  return torch::softmax(biased, -1).view(scores.sizes());
}

}  // namespace rung
