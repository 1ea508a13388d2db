// core/model/cpu_attention_inputs.h
//
// The inputs of the fp32 CPU attention kernels (cpu_attention.h, tiled_attention.h,
// tiled_attention_training.h), checked in one place: q [B, heads, T, d], k and v [B, kv_heads, T, d]
// contiguous fp32 CPU with heads a multiple of kv_heads; ALiBi slopes one per head; document starts
// [B, T] int64 on the CPU with 0 <= doc_start[b, i] <= i (a query's document starts at or before it).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace rung {

struct CpuAttentionInputs {
  at::Tensor q, k, v;  // as given
  at::Tensor slopes;   // [heads] contiguous fp32 CPU, or undefined without ALiBi
  at::Tensor starts;   // [B, T] contiguous int64, or undefined without the document mask
  int64_t batch = 0, heads = 0, kv_heads = 0, groups = 0, time = 0, dim = 0;  // groups = heads / kv_heads

  const float* slope_data() const { return slopes.defined() ? slopes.data_ptr<float>() : nullptr; }
  const int64_t* start_data() const { return starts.defined() ? starts.data_ptr<int64_t>() : nullptr; }
};

// The inputs with their sizes read from q and k, unchecked: for tensors CheckCpuAttentionInputs has
// already passed (a kernel's backward rebuilding them from what it saved).
CpuAttentionInputs SizedCpuAttentionInputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                           const at::Tensor& slopes, const at::Tensor& starts);

// Checks q, k, v, alibi_slopes (or undefined) and doc_start (or undefined) as CausalAttention
// (attention.h) takes them; throws c10::Error naming `kernel` for the first violation.
CpuAttentionInputs CheckCpuAttentionInputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                           const at::Tensor& alibi_slopes, const at::Tensor& doc_start,
                                           const char* kernel);

}  // namespace rung
