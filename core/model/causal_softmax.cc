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

namespace {

// scores [B * kv_heads, g * queries, T], the queries at positions T - queries..T - 1; masked: the keys
// each query may not see, broadcast over [B, kv_heads, g, queries, T].
torch::Tensor MaskedSoftmax(const torch::Tensor& scores, int64_t queries, int64_t kv_heads,
                            const torch::Tensor& alibi_slopes, const torch::Tensor& masked) {
  const int64_t time = scores.size(2);
  const int64_t batch = scores.size(0) / kv_heads, groups = scores.size(1) / queries;
  torch::Tensor biased = scores.reshape({batch, kv_heads, groups, queries, time});
  if (alibi_slopes.defined()) {
    auto positions = torch::arange(time, scores.options().dtype(torch::kLong));
    auto query_positions = positions.narrow(0, time - queries, queries);
    auto distance = (query_positions.view({queries, 1}) - positions.view({1, time})).clamp_min(0);  // i - j
    // head (n % kv_heads) * g + r / queries: the slopes [heads] viewed as [kv_heads, g]
    auto slopes = alibi_slopes.to(scores.device(), scores.scalar_type()).view({1, kv_heads, groups, 1, 1});
    biased = biased - slopes * distance.to(scores.scalar_type());
  }
  biased = biased.masked_fill(masked, -std::numeric_limits<double>::infinity());
  return torch::softmax(biased, -1).view(scores.sizes());
}

}  // namespace

torch::Tensor CausalSoftmax(const torch::Tensor& scores, int64_t time, int64_t kv_heads,
                            const torch::Tensor& alibi_slopes, const torch::Tensor& doc_start) {
  TORCH_CHECK(scores.dim() == 3 && scores.size(2) == time && scores.size(1) % time == 0 &&
                  scores.size(0) % kv_heads == 0,
              "CausalSoftmax: scores must be [B * kv_heads, g * T, T]");
  auto masked = MaskedKeys(time, doc_start, scores.device()).unsqueeze(1);  // [B or 1, 1, 1, T, T]
  return MaskedSoftmax(scores, time, kv_heads, alibi_slopes, masked);
}

torch::Tensor TrailingCausalSoftmax(const torch::Tensor& scores, int64_t queries, int64_t kv_heads,
                                    const torch::Tensor& alibi_slopes) {
  TORCH_CHECK(scores.dim() == 3 && queries >= 1 && scores.size(2) >= queries && scores.size(1) % queries == 0 &&
                  scores.size(0) % kv_heads == 0,
              "TrailingCausalSoftmax: scores must be [B * kv_heads, g * queries, T] with T >= queries");
  const int64_t time = scores.size(2);
  auto positions = torch::arange(time, torch::TensorOptions(scores.device()).dtype(torch::kLong));
  auto masked = positions.view({1, time}) > positions.narrow(0, time - queries, queries).view({queries, 1});  // j > i
  return MaskedSoftmax(scores, queries, kv_heads, alibi_slopes, masked);
}

}  // namespace rung
