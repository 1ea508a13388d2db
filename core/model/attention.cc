#include "core/model/attention.h"

#include <cmath>
#include <limits>

#include "core/model/causal_softmax.h"
#include "core/model/cpu_attention.h"
#include "core/model/tiled_attention.h"
#include "core/model/tiled_attention_training.h"

namespace rung {

bool FusedAttentionAvailable() {
#if TORCH_VERSION_MAJOR >= 2
  return true;
#else
  return false;
#endif
}

AttentionKernel ResolveAttentionKernel(AttentionKernel requested, const torch::Device& device,
                                       torch::ScalarType dtype) {
  if (requested == AttentionKernel::kFused) {
    TORCH_CHECK(FusedAttentionAvailable(), "fused attention needs LibTorch >= 2.0");
    return requested;
  }
  const bool slabs_apply = device.is_cpu() && dtype == torch::kFloat && CpuAttentionAvailable();
  const bool tiled_applies = device.is_cpu() && dtype == torch::kFloat && TiledAttentionAvailable();
  if (requested == AttentionKernel::kCpuSlabs) {
    TORCH_CHECK(slabs_apply, "the CPU slab attention kernel needs fp32 CPU tensors and sgemm_");
    return requested;
  }
  if (requested == AttentionKernel::kCpuTiled) {
    TORCH_CHECK(tiled_applies, "the tiled CPU attention kernel needs fp32 CPU tensors and sgemm_");
    return requested;
  }
  if (requested == AttentionKernel::kCpuAuto) {
    TORCH_CHECK(slabs_apply && tiled_applies, "the CPU attention kernels need fp32 CPU tensors and sgemm_");
    return requested;
  }
  if (requested == AttentionKernel::kComposite) return requested;
  if (device.is_cuda() && FusedAttentionAvailable()) return AttentionKernel::kFused;
  return slabs_apply && tiled_applies ? AttentionKernel::kCpuAuto : AttentionKernel::kComposite;
}

double AttentionQueryScale(AttentionKernel kernel, int64_t head_dim) {
  return kernel == AttentionKernel::kFused ? 1.0 : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

torch::Tensor SlidingWindowStarts(int64_t batch, int64_t time, int64_t window, const torch::Device& device) {
  TORCH_CHECK(window >= 1, "SlidingWindowStarts: the window must hold a key");
  const torch::Tensor starts =
      (torch::arange(time, torch::TensorOptions().dtype(torch::kLong).device(device)) - (window - 1)).clamp_min(0);
  return starts.unsqueeze(0).expand({batch, time}).contiguous();
}

torch::Tensor DocumentStarts(const torch::Tensor& tokens, int64_t document_start_token) {
  TORCH_CHECK(tokens.dim() == 2, "DocumentStarts: tokens must be [B, T]");
  auto positions = torch::arange(tokens.size(1), tokens.options().dtype(torch::kLong)).expand_as(tokens);
  auto starts_here = positions.masked_fill(tokens != document_start_token, 0);
  return std::get<0>(starts_here.cummax(1));
}

namespace {

// kComposite: the g = heads / kv_heads query heads sharing a KV head stacked along time, one batched
// product with K, `softmax` (scores [B * kv_heads, g * n, T] -> probs), one product with V.
// q: [B, heads, n, d]; k, v: [B, kv_heads, T, d]. Returns [B, n, heads * d].
template <typename Softmax>
torch::Tensor StackedAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const Softmax& softmax) {
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2), dim = q.size(3);
  const int64_t kv_heads = k.size(1), groups = heads / kv_heads, time = k.size(2);
  auto q_stacked = q.view({batch * kv_heads, groups * queries, dim});
  auto k_t = k.view({batch * kv_heads, time, dim}).transpose(1, 2);
  auto v_heads = v.view({batch * kv_heads, time, dim});
  auto out = at::bmm(softmax(at::bmm(q_stacked, k_t)), v_heads);  // [B*kv, g*n, d] == [B, heads, n, d]
  return out.view({batch, heads, queries, dim}).transpose(1, 2).reshape({batch, queries, heads * dim});
}

}  // namespace

torch::Tensor CausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                              const torch::Tensor& alibi_slopes, const torch::Tensor& doc_start,
                              AttentionKernel kernel) {
  const int64_t batch = q.size(0), time = q.size(2), kv_heads = k.size(1);
  TORCH_CHECK(!doc_start.defined() || (doc_start.dim() == 2 && doc_start.size(0) == batch &&
                                       doc_start.size(1) == time && doc_start.scalar_type() == torch::kLong &&
                                       doc_start.device() == q.device()),
              "CausalAttention: doc_start must be [B, T] int64 on the device of q");
  const bool needs_grad =
      torch::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  if (kernel == AttentionKernel::kCpuAuto) {
    kernel = needs_grad && time < kTiledTrainingMinLength ? AttentionKernel::kCpuSlabs : AttentionKernel::kCpuTiled;
  }
  if (kernel == AttentionKernel::kCpuTiled || (kernel == AttentionKernel::kCpuSlabs && !needs_grad)) {
    return needs_grad ? TiledCausalAttentionTraining(q, k, v, alibi_slopes, doc_start)
                      : TiledCausalAttention(q, k, v, alibi_slopes, doc_start);
  }
  if (kernel == AttentionKernel::kCpuSlabs) return CpuCausalAttention(q, k, v, alibi_slopes, doc_start);
#if TORCH_VERSION_MAJOR >= 2
  if (kernel == AttentionKernel::kFused) {
    const int64_t heads = q.size(1), dim = q.size(3), groups = heads / kv_heads;
    auto keys = k, values = v;
    if (groups > 1) {
      keys = keys.repeat_interleave(groups, 1);
      values = values.repeat_interleave(groups, 1);
    }
    torch::Tensor out;
    if (!alibi_slopes.defined() && !doc_start.defined()) {
      out = at::scaled_dot_product_attention(q, keys, values, {}, 0.0, true);
    } else {
      auto masked = MaskedKeys(time, doc_start, q.device());  // [B or 1, 1, T, T]
      torch::Tensor mask = masked.logical_not();              // boolean: true where the key takes part
      if (alibi_slopes.defined()) {
        auto positions = torch::arange(time, q.options().dtype(torch::kFloat));
        auto distance = positions.view({time, 1}) - positions.view({1, time});
        mask = (-alibi_slopes.to(q.device(), torch::kFloat).view({1, heads, 1, 1}) * distance)
                   .masked_fill(masked, -std::numeric_limits<float>::infinity())
                   .to(q.scalar_type());  // additive, [B or 1, heads, T, T]
      }
      out = at::scaled_dot_product_attention(q, keys, values, mask, 0.0, false);
    }
    return out.transpose(1, 2).reshape({batch, time, heads * dim});
  }
#endif
  TORCH_CHECK(kernel == AttentionKernel::kComposite, "CausalAttention: unresolved or unavailable kernel");
  return StackedAttention(q, k, v, [&](const torch::Tensor& scores) {
    return CausalSoftmax(scores, time, kv_heads, alibi_slopes, doc_start);
  });
}

torch::Tensor TrailingCausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                      const torch::Tensor& alibi_slopes) {
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && k.sizes() == v.sizes() && q.size(0) == k.size(0) &&
                  q.size(3) == k.size(3) && q.size(1) % k.size(1) == 0 && q.size(2) <= k.size(2),
              "TrailingCausalAttention: q must be [B, heads, n, d] and k, v [B, kv_heads, T, d] with n <= T");
  const int64_t queries = q.size(2), kv_heads = k.size(1);
  return StackedAttention(q, k, v, [&](const torch::Tensor& scores) {
    return TrailingCausalSoftmax(scores, queries, kv_heads, alibi_slopes);
  });
}

}  // namespace rung
