#include "core/model/attention.h"

#include <cmath>
#include <limits>

namespace rung {

bool FusedAttentionAvailable() {
#if TORCH_VERSION_MAJOR >= 2
  return true;
#else
  return false;
#endif
}

AttentionBias MakeAttentionBias(int64_t batch, int64_t time, int64_t heads, int64_t kv_heads,
                                const torch::Tensor& alibi_slopes, const torch::TensorOptions& options,
                                bool for_fused) {
  torch::NoGradGuard no_grad;
  AttentionBias bias;
  bias.time = time;
  const int64_t groups = heads / kv_heads;
  auto positions = torch::arange(time, options);
  auto distance = positions.view({time, 1}) - positions.view({1, time});  // i - j
  auto causal = torch::zeros({time, time}, options)
                    .masked_fill(distance < 0, -std::numeric_limits<float>::infinity());
  if (!alibi_slopes.defined()) {
    if (!for_fused) bias.exact = causal.repeat({groups, 1}).unsqueeze(0);
    return bias;
  }
  // [heads, T, T] = causal - m_h * (i - j)
  auto per_head = causal.unsqueeze(0) - alibi_slopes.to(options).view({heads, 1, 1}) * distance.clamp_min(0).unsqueeze(0);
  if (for_fused) {
    bias.fused = per_head.unsqueeze(0);
  } else {
    // head h = kv * g + i -> row block i of KV group kv: [kv_heads, g*T, T], repeated over batch
    bias.exact = per_head.view({kv_heads, groups * time, time}).repeat({batch, 1, 1});
  }
  return bias;
}

torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const AttentionBias& bias, bool fused) {
  const int64_t batch = q.size(0), heads = q.size(1), time = q.size(2), dim = q.size(3);
  const int64_t kv_heads = k.size(1), groups = heads / kv_heads;
#if TORCH_VERSION_MAJOR >= 2
  if (fused) {
    auto keys = k, values = v.transpose(1, 2);
    if (groups > 1) {
      keys = keys.repeat_interleave(groups, 1);
      values = values.repeat_interleave(groups, 1);
    }
    auto out = bias.fused.defined()
                   ? at::scaled_dot_product_attention(q, keys, values, bias.fused.to(q.scalar_type()), 0.0, false)
                   : at::scaled_dot_product_attention(q, keys, values, {}, 0.0, true);
    return out.transpose(1, 2).reshape({batch, time, heads * dim});
  }
#else
  TORCH_CHECK(!fused, "fused attention needs LibTorch >= 2.0");
#endif
  auto q_stacked = q.view({batch * kv_heads, groups * time, dim});
  auto k_t = k.view({batch * kv_heads, time, dim}).transpose(1, 2);
  auto v_heads = v.transpose(1, 2).reshape({batch * kv_heads, time, dim});
  auto scores = at::baddbmm(bias.exact.to(q.scalar_type()), q_stacked, k_t, 1.0, 1.0 / std::sqrt(static_cast<double>(dim)));
  auto probs = at::softmax(scores, -1);
  auto out = at::bmm(probs, v_heads);  // [B*kv, g*T, d] == [B, heads, T, d]
  return out.view({batch, heads, time, dim}).transpose(1, 2).reshape({batch, time, heads * dim});
}

}  // namespace rung
