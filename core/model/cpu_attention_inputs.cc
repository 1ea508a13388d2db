#include "core/model/cpu_attention_inputs.h"

namespace rung {

CpuAttentionInputs SizedCpuAttentionInputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                           const at::Tensor& slopes, const at::Tensor& starts) {
  CpuAttentionInputs in;
  in.q = q;
  in.k = k;
  in.v = v;
  in.slopes = slopes;
  in.starts = starts;
  in.batch = q.size(0);
  in.heads = q.size(1);
  in.kv_heads = k.size(1);
  in.groups = in.heads / in.kv_heads;
  in.time = q.size(2);
  in.dim = q.size(3);
  return in;
}

CpuAttentionInputs CheckCpuAttentionInputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                           const at::Tensor& alibi_slopes, const at::Tensor& doc_start,
                                           const char* kernel) {
  TORCH_CHECK(q.defined() && k.defined() && v.defined() && q.device().is_cpu() && k.device().is_cpu() &&
                  v.device().is_cpu() && q.scalar_type() == at::kFloat && k.scalar_type() == at::kFloat &&
                  v.scalar_type() == at::kFloat && q.is_contiguous() && k.is_contiguous() && v.is_contiguous(),
              kernel, ": needs contiguous fp32 CPU tensors");
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.sizes() == k.sizes() && q.size(0) == k.size(0) &&
                  q.size(2) == k.size(2) && q.size(3) == k.size(3) && k.size(1) > 0 && q.size(1) % k.size(1) == 0,
              kernel, ": q [B, heads, T, d], k and v [B, kv_heads, T, d], heads a multiple of kv_heads");
  CpuAttentionInputs in = SizedCpuAttentionInputs(q, k, v, at::Tensor(), at::Tensor());
  if (alibi_slopes.defined()) {
    TORCH_CHECK(alibi_slopes.numel() == in.heads, kernel, ": alibi_slopes must have one slope per head");
    in.slopes = alibi_slopes.detach().to(at::kCPU, at::kFloat).contiguous();
  }
  if (doc_start.defined()) {
    TORCH_CHECK(doc_start.device().is_cpu() && doc_start.scalar_type() == at::kLong && doc_start.dim() == 2 &&
                    doc_start.size(0) == in.batch && doc_start.size(1) == in.time,
                kernel, ": doc_start must be [B, T] int64 on the CPU");
    in.starts = doc_start.contiguous();
    const bool inside_window = in.starts.ge(0).all().item<bool>() &&
                               in.starts.le(at::arange(in.time, in.starts.options())).all().item<bool>();
    TORCH_CHECK(inside_window, kernel, ": doc_start[b, i] must lie in [0, i]");
  }
  return in;
}

}  // namespace rung
