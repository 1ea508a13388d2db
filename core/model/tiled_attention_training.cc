// Compiled with -ffast-math (see core/CMakeLists.txt) so that GCC vectorizes expf with glibc's
// libmvec; nothing here tests for NaN or infinity: hidden scores are never exponentiated.
#include "core/model/tiled_attention_training.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>

#include "core/model/attention_tile.h"
#include "core/model/cpu_attention_inputs.h"
#include "core/model/row_major_sgemm.h"
#include "core/model/tiled_attention.h"

namespace rung {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The backward's query blocks and key tiles: two score tiles (P and dS) of a thread stay in L2.
constexpr int64_t kBackwardQueryBlock = 64;
constexpr int64_t kBackwardKeyTile = 256;

// P = exp(S - L) over the visible columns, 0 elsewhere.
__attribute__((target_clones("avx2", "default"))) void ProbabilityRow(float* row, int64_t width,
                                                                      VisibleColumns visible, float logsumexp) {
  const int64_t begin = std::min(visible.begin, visible.end), end = visible.end;
  for (int64_t j = begin; j < end; ++j) row[j] = expf(row[j] - logsumexp);
  std::fill(row, row + begin, 0.0f);
  std::fill(row + end, row + width, 0.0f);
}

// dS = P (dP - D) over the visible columns, in place of dP; 0 elsewhere.
__attribute__((target_clones("avx2", "default"))) void ScoreGradientRow(const float* probs, float* grad,
                                                                        int64_t width, VisibleColumns visible,
                                                                        float delta) {
  const int64_t begin = std::min(visible.begin, visible.end), end = visible.end;
  for (int64_t j = begin; j < end; ++j) grad[j] = probs[j] * (grad[j] - delta);
  std::fill(grad, grad + begin, 0.0f);
  std::fill(grad + end, grad + width, 0.0f);
}

__attribute__((target_clones("avx2", "default"))) float Dot(const float* a, const float* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t c = 0; c < n; ++c) sum += a[c] * b[c];
  return sum;
}

// The inputs as the public entry checked them; absent slopes and starts travel as empty tensors.
CpuAttentionInputs Checked(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& slopes,
                           const at::Tensor& starts) {
  return SizedCpuAttentionInputs(q, k, v, slopes.numel() > 0 ? slopes : at::Tensor(),
                                 starts.numel() > 0 ? starts : at::Tensor());
}

class TiledAttentionFunction : public torch::autograd::Function<TiledAttentionFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& slopes, const at::Tensor& starts) {
    RECORD_FUNCTION("rung::TiledAttention", c10::ArrayRef<const c10::IValue>{});
    at::Tensor logsumexp;
    at::Tensor out = TiledAttentionForward(Checked(q, k, v, slopes, starts), &logsumexp);
    ctx->save_for_backward({q, k, v, out, logsumexp, slopes, starts});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const CpuAttentionInputs in = Checked(saved[0], saved[1], saved[2], saved[5], saved[6]);
    const at::Tensor &out = saved[3], &logsumexp = saved[4];
    const at::Tensor grad_out = grad_outputs[0].contiguous();
    at::Tensor grad_q = at::empty_like(in.q), grad_k = at::zeros_like(in.k), grad_v = at::zeros_like(in.v);
    const int64_t heads = in.heads, kv_heads = in.kv_heads, groups = in.groups;
    const int64_t T = in.time, d = in.dim, out_stride = heads * d;
    const float* qp = in.q.data_ptr<float>();
    const float* kp = in.k.data_ptr<float>();
    const float* vp = in.v.data_ptr<float>();
    const float* op = out.data_ptr<float>();
    const float* lse_p = logsumexp.data_ptr<float>();
    const float* gop = grad_out.data_ptr<float>();
    const float* slope_p = in.slope_data();
    const int64_t* start_p = in.start_data();
    float* gqp = grad_q.data_ptr<float>();
    float* gkp = grad_k.data_ptr<float>();
    float* gvp = grad_v.data_ptr<float>();
    at::parallel_for(0, in.batch * kv_heads, 1, [&](int64_t slab_begin, int64_t slab_end) {
      const size_t tile_size = static_cast<size_t>(kBackwardQueryBlock * kBackwardKeyTile);
      std::vector<float> probs(tile_size), grads(tile_size), delta(kBackwardQueryBlock);
      std::vector<VisibleColumns> visible(kBackwardQueryBlock);
      for (int64_t slab = slab_begin; slab < slab_end; ++slab) {
        const int64_t b = slab / kv_heads, kv_head = slab % kv_heads;
        const float* kk = kp + slab * T * d;
        const float* vv = vp + slab * T * d;
        float* gk = gkp + slab * T * d;
        float* gv = gvp + slab * T * d;
        for (int64_t gi = 0; gi < groups; ++gi) {
          const int64_t h = kv_head * groups + gi;
          const float* qq = qp + (b * heads + h) * T * d;
          const float* go = gop + b * T * out_stride + h * d;
          const float* oo = op + b * T * out_stride + h * d;
          const float* lse = lse_p + (b * heads + h) * T;
          float* gq = gqp + (b * heads + h) * T * d;
          ScoreTileSpec tile;
          tile.k = kk;
          tile.dim = d;
          tile.row_start = start_p != nullptr ? start_p + b * T : nullptr;
          tile.slope = slope_p != nullptr ? slope_p[h] : 0.0f;
          for (int64_t r0 = 0; r0 < T; r0 += kBackwardQueryBlock) {
            const int64_t r1 = std::min(T, r0 + kBackwardQueryBlock), rows = r1 - r0;
            for (int64_t r = 0; r < rows; ++r) {
              delta[static_cast<size_t>(r)] = Dot(go + (r0 + r) * out_stride, oo + (r0 + r) * out_stride, d);
            }
            tile.q = qq + r0 * d;
            tile.r0 = r0;
            tile.rows = rows;
            const int64_t first_key = FirstVisibleKey(tile.row_start, r0, r1);
            for (int64_t c0 = first_key; c0 < r1; c0 += kBackwardKeyTile) {
              const int64_t w = std::min(kBackwardKeyTile, r1 - c0);
              tile.c0 = c0;
              tile.width = w;
              ScoreTile(tile, probs.data(), visible.data());
              for (int64_t r = 0; r < rows; ++r) {
                ProbabilityRow(probs.data() + r * w, w, visible[static_cast<size_t>(r)], lse[r0 + r]);
              }
              RowMajorSgemm(true, false, w, d, rows, probs.data(), w, go + r0 * out_stride, out_stride, 1.0f,
                            gv + c0 * d, d);  // dV_tile += P^T dO_blk
              RowMajorSgemm(false, true, rows, w, d, go + r0 * out_stride, out_stride, vv + c0 * d, d, 0.0f,
                            grads.data(), w);  // dP = dO_blk V_tile^T
              for (int64_t r = 0; r < rows; ++r) {
                ScoreGradientRow(probs.data() + r * w, grads.data() + r * w, w, visible[static_cast<size_t>(r)],
                                 delta[static_cast<size_t>(r)]);
              }
              RowMajorSgemm(false, false, rows, d, w, grads.data(), w, kk + c0 * d, d, c0 == first_key ? 0.0f : 1.0f,
                            gq + r0 * d, d);  // dQ_blk += dS K_tile
              RowMajorSgemm(true, false, w, d, rows, grads.data(), w, tile.q, d, 1.0f, gk + c0 * d,
                            d);  // dK_tile += dS^T Q_blk
            }
          }
        }
      }
    });
    return {grad_q, grad_k, grad_v, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor TiledCausalAttentionTraining(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                        const at::Tensor& alibi_slopes, const at::Tensor& doc_start) {
  TORCH_CHECK(TiledAttentionAvailable(), "TiledCausalAttentionTraining: this build has no sgemm_ (RUNG_HAVE_SGEMM)");
  const CpuAttentionInputs in =
      CheckCpuAttentionInputs(q, k, v, alibi_slopes, doc_start, "TiledCausalAttentionTraining");
  const at::Tensor absent = at::empty({0}, q.options());
  return TiledAttentionFunction::apply(q, k, v, in.slopes.defined() ? in.slopes : absent,
                                       in.starts.defined() ? in.starts : at::empty({0}, q.options().dtype(at::kLong)));
}

std::vector<at::Tensor> TiledAttentionSavedTensors(const at::Tensor& out) {
  using Node = torch::autograd::CppNode<TiledAttentionFunction>;
  const auto* node = dynamic_cast<const Node*>(out.grad_fn().get());
  if (node == nullptr) return {};
  return node->ctx_.get_saved_variables();
}

}  // namespace rung
