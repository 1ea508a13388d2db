// Compiled with -ffast-math (see core/CMakeLists.txt) so that GCC vectorizes expf with glibc's
// libmvec; nothing here tests for NaN or infinity, and masked entries are never exponentiated.
#include "core/model/cpu_attention.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "core/model/cpu_attention_inputs.h"
#include "core/model/row_major_sgemm.h"

namespace rung {

bool CpuAttentionAvailable() {
#ifdef RUNG_HAVE_SGEMM
  return true;
#else
  return false;
#endif
}

#ifdef RUNG_HAVE_SGEMM
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t kRowBlock = 64;

// One row of a causal row block whose keys end at `end`: softmax of row[first..query] with the ALiBi
// bias slope * (j - query), in place; zeros in [0, first) and (query, end).
__attribute__((target_clones("avx2", "default"))) void SoftmaxRow(float* row, int64_t first, int64_t query,
                                                                   int64_t end, float slope) {
  float max_value = -std::numeric_limits<float>::max();
  if (slope != 0.0f) {
    for (int64_t j = first; j <= query; ++j) row[j] += slope * static_cast<float>(j - query);
  }
  for (int64_t j = first; j <= query; ++j) max_value = std::max(max_value, row[j]);
  float sum = 0.0f;
  for (int64_t j = first; j <= query; ++j) {
    const float e = expf(row[j] - max_value);
    row[j] = e;
    sum += e;
  }
  const float inverse = 1.0f / sum;
  for (int64_t j = first; j <= query; ++j) row[j] *= inverse;
  std::fill(row, row + first, 0.0f);
  std::fill(row + query + 1, row + end, 0.0f);
}

// dS = P (dP - sum_j P dP) over grad[first..query], in place; zeros in [0, first) and (query, end).
__attribute__((target_clones("avx2", "default"))) void SoftmaxBackwardRow(const float* probs, float* grad,
                                                                           int64_t first, int64_t query,
                                                                           int64_t end) {
  float dot = 0.0f;
  for (int64_t j = first; j <= query; ++j) dot += probs[j] * grad[j];
  for (int64_t j = first; j <= query; ++j) grad[j] = probs[j] * (grad[j] - dot);
  std::fill(grad, grad + first, 0.0f);
  std::fill(grad + query + 1, grad + end, 0.0f);
}

struct Shape {
  int64_t batch, heads, kv_heads, groups, time, dim;
};

class SlabAttention : public torch::autograd::Function<SlabAttention> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& slopes,
                               const torch::Tensor& doc_start) {
    RECORD_FUNCTION("rung::SlabAttention", c10::ArrayRef<const c10::IValue>{});
    const Shape s{q.size(0), q.size(1), k.size(1), q.size(1) / k.size(1), q.size(2), q.size(3)};
    auto probs = torch::empty({s.batch, s.heads, s.time, s.time}, q.options());
    auto out = torch::empty({s.batch, s.time, s.heads * s.dim}, q.options());
    const float* qp = q.data_ptr<float>();
    const float* kp = k.data_ptr<float>();
    const float* vp = v.data_ptr<float>();
    const float* slope_p = slopes.numel() > 0 ? slopes.data_ptr<float>() : nullptr;
    const int64_t* start_p = doc_start.numel() > 0 ? doc_start.data_ptr<int64_t>() : nullptr;
    float* pp = probs.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const int64_t T = s.time, d = s.dim, out_stride = s.heads * d;
    at::parallel_for(0, s.batch * s.kv_heads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t slab = begin; slab < end; ++slab) {
        const int64_t b = slab / s.kv_heads, kvh = slab % s.kv_heads;
        const float* kk = kp + slab * T * d;
        const float* vv = vp + slab * T * d;
        const int64_t* starts = start_p != nullptr ? start_p + b * T : nullptr;
        for (int64_t gi = 0; gi < s.groups; ++gi) {
          const int64_t h = kvh * s.groups + gi;
          const float* qq = qp + (b * s.heads + h) * T * d;
          float* pr = pp + (b * s.heads + h) * T * T;
          float* oo = op + b * T * out_stride + h * d;
          const float slope = slope_p ? slope_p[h] : 0.0f;
          for (int64_t r0 = 0; r0 < T; r0 += kRowBlock) {
            const int64_t r1 = std::min(T, r0 + kRowBlock);
            RowMajorSgemm(false, true, r1 - r0, r1, d, qq + r0 * d, d, kk, d, 0.0f, pr + r0 * T, T);
            for (int64_t i = r0; i < r1; ++i) SoftmaxRow(pr + i * T, starts != nullptr ? starts[i] : 0, i, r1, slope);
            RowMajorSgemm(false, false, r1 - r0, d, r1, pr + r0 * T, T, vv, d, 0.0f, oo + r0 * out_stride, out_stride);
          }
        }
      }
    });
    ctx->save_for_backward({q, k, v, probs, doc_start});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3], &doc_start = saved[4];
    torch::Tensor grad_out = grad_outputs[0].contiguous();
    const Shape s{q.size(0), q.size(1), k.size(1), q.size(1) / k.size(1), q.size(2), q.size(3)};
    auto grad_q = torch::empty_like(q);
    auto grad_k = torch::zeros_like(k);
    auto grad_v = torch::zeros_like(v);
    const float* qp = q.data_ptr<float>();
    const float* kp = k.data_ptr<float>();
    const float* vp = v.data_ptr<float>();
    const float* pp = probs.data_ptr<float>();
    const int64_t* start_p = doc_start.numel() > 0 ? doc_start.data_ptr<int64_t>() : nullptr;
    const float* gop = grad_out.data_ptr<float>();
    float* gqp = grad_q.data_ptr<float>();
    float* gkp = grad_k.data_ptr<float>();
    float* gvp = grad_v.data_ptr<float>();
    const int64_t T = s.time, d = s.dim, out_stride = s.heads * d;
    at::parallel_for(0, s.batch * s.kv_heads, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(static_cast<size_t>(kRowBlock * T));  // dP, then dS, of one row block
      for (int64_t slab = begin; slab < end; ++slab) {
        const int64_t b = slab / s.kv_heads;
        const float* kk = kp + slab * T * d;
        const float* vv = vp + slab * T * d;
        float* gk = gkp + slab * T * d;
        float* gv = gvp + slab * T * d;
        const int64_t* starts = start_p != nullptr ? start_p + b * T : nullptr;
        for (int64_t gi = 0; gi < s.groups; ++gi) {
          const int64_t h = (slab % s.kv_heads) * s.groups + gi;
          const float* qq = qp + (b * s.heads + h) * T * d;
          const float* pr = pp + (b * s.heads + h) * T * T;
          const float* go = gop + b * T * out_stride + h * d;
          float* gq = gqp + (b * s.heads + h) * T * d;
          for (int64_t r0 = 0; r0 < T; r0 += kRowBlock) {
            const int64_t r1 = std::min(T, r0 + kRowBlock), rows = r1 - r0;
            float* ds = scratch.data();  // [rows, r1] with leading dimension T
            RowMajorSgemm(false, true, rows, r1, d, go + r0 * out_stride, out_stride, vv, d, 0.0f, ds, T);
            for (int64_t i = r0; i < r1; ++i) {
              SoftmaxBackwardRow(pr + i * T, ds + (i - r0) * T, starts != nullptr ? starts[i] : 0, i, r1);
            }
            RowMajorSgemm(false, false, rows, d, r1, ds, T, kk, d, 0.0f, gq + r0 * d, d);
            RowMajorSgemm(true, false, r1, d, rows, ds, T, qq + r0 * d, d, 1.0f, gk, d);
            RowMajorSgemm(true, false, r1, d, rows, pr + r0 * T, T, go + r0 * out_stride, out_stride, 1.0f, gv, d);
          }
        }
      }
    });
    return {grad_q, grad_k, grad_v, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor CpuCausalAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& alibi_slopes, const torch::Tensor& doc_start) {
  const CpuAttentionInputs in = CheckCpuAttentionInputs(q, k, v, alibi_slopes, doc_start, "CpuCausalAttention");
  return SlabAttention::apply(q, k, v, in.slopes.defined() ? in.slopes : torch::empty({0}, q.options()),
                              in.starts.defined() ? in.starts : torch::empty({0}, torch::kLong));
}
#else
torch::Tensor CpuCausalAttention(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                 const torch::Tensor&, const torch::Tensor&) {
  TORCH_CHECK(false, "CpuCausalAttention: this build has no sgemm_ (RUNG_HAVE_SGEMM)");
}
#endif

}  // namespace rung
