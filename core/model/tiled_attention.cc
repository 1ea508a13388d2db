// Compiled with -ffast-math (see core/CMakeLists.txt) so that GCC vectorizes expf with glibc's
// libmvec; nothing here tests for NaN or infinity: hidden scores are never exponentiated, and a row's
// running maximum starts from its first visible score.
#include "core/model/tiled_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/model/attention_tile.h"
#include "core/model/row_major_sgemm.h"

namespace rung {

bool TiledAttentionAvailable() { return RowMajorSgemmAvailable(); }

namespace {

constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyTile = 256;

// One row of a score tile of `width` keys: the scores of the visible columns become exp(score - new max)
// and the rest 0; the row's running maximum and sum advance. Returns the factor the row's output
// accumulated so far must be multiplied by (0 before the row's first visible key, 1 when it sees none here).
__attribute__((target_clones("avx2", "default"))) float OnlineSoftmaxRow(float* row, int64_t width,
                                                                         VisibleColumns visible, float* running_max,
                                                                         float* running_sum) {
  const int64_t begin = visible.begin, end = visible.end;
  if (begin >= end) {
    std::fill(row, row + width, 0.0f);
    return 1.0f;
  }
  float tile_max = row[begin];
  for (int64_t j = begin + 1; j < end; ++j) tile_max = std::max(tile_max, row[j]);
  const bool started = *running_sum > 0.0f;
  const float new_max = started ? std::max(*running_max, tile_max) : tile_max;
  float sum = 0.0f;
  for (int64_t j = begin; j < end; ++j) {
    const float e = expf(row[j] - new_max);
    row[j] = e;
    sum += e;
  }
  std::fill(row, row + begin, 0.0f);
  std::fill(row + end, row + width, 0.0f);
  const float rescale = started ? expf(*running_max - new_max) : 0.0f;
  *running_sum = *running_sum * rescale + sum;
  *running_max = new_max;
  return rescale;
}

}  // namespace

at::Tensor TiledAttentionForward(const CpuAttentionInputs& in, at::Tensor* logsumexp) {
  const int64_t batch = in.batch, heads = in.heads, kv_heads = in.kv_heads, groups = in.groups;
  const int64_t T = in.time, d = in.dim, out_stride = heads * d;
  at::Tensor out = at::empty({batch, T, heads * d}, in.q.options());
  float* lse_p = nullptr;
  if (logsumexp != nullptr) {
    *logsumexp = at::empty({batch, heads, T}, in.q.options());
    lse_p = logsumexp->data_ptr<float>();
  }
  const float* qp = in.q.data_ptr<float>();
  const float* kp = in.k.data_ptr<float>();
  const float* vp = in.v.data_ptr<float>();
  const float* slope_p = in.slope_data();
  const int64_t* start_p = in.start_data();
  float* op = out.data_ptr<float>();
  const int64_t blocks = (T + kQueryBlock - 1) / kQueryBlock;
  const int64_t units = batch * heads * blocks;  // unit = (block, b, h), block slowest: interleaves the triangle
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), units));
  at::parallel_for(0, threads, 1, [&](int64_t thread_begin, int64_t thread_end) {
    std::vector<float> scores(static_cast<size_t>(kQueryBlock * kKeyTile));
    std::vector<VisibleColumns> visible(kQueryBlock);
    std::vector<float> row_max(kQueryBlock), row_sum(kQueryBlock);
    for (int64_t thread = thread_begin; thread < thread_end; ++thread) {
      for (int64_t unit = thread; unit < units; unit += threads) {
        // Alternate directions through the blocks so that each thread gets long and short ones alike.
        const int64_t block_index = unit / (batch * heads);
        const int64_t block = (block_index % 2 == 0) ? block_index / 2 : blocks - 1 - block_index / 2;
        const int64_t b = (unit / heads) % batch, h = unit % heads;
        const int64_t r0 = block * kQueryBlock, r1 = std::min(T, r0 + kQueryBlock), rows = r1 - r0;
        const int64_t slab = b * kv_heads + h / groups;
        const float* vv = vp + slab * T * d;
        float* oo = op + b * T * out_stride + r0 * out_stride + h * d;
        ScoreTileSpec tile;
        tile.q = qp + ((b * heads + h) * T + r0) * d;
        tile.k = kp + slab * T * d;
        tile.dim = d;
        tile.r0 = r0;
        tile.rows = rows;
        tile.row_start = start_p != nullptr ? start_p + b * T : nullptr;
        tile.slope = slope_p != nullptr ? slope_p[h] : 0.0f;
        std::fill(row_max.begin(), row_max.end(), 0.0f);
        std::fill(row_sum.begin(), row_sum.end(), 0.0f);
        for (int64_t r = 0; r < rows; ++r) std::fill(oo + r * out_stride, oo + r * out_stride + d, 0.0f);
        for (int64_t c0 = FirstVisibleKey(tile.row_start, r0, r1); c0 < r1; c0 += kKeyTile) {
          tile.c0 = c0;
          tile.width = std::min(kKeyTile, r1 - c0);
          ScoreTile(tile, scores.data(), visible.data());
          for (int64_t r = 0; r < rows; ++r) {
            const size_t row = static_cast<size_t>(r);
            const float rescale = OnlineSoftmaxRow(scores.data() + r * tile.width, tile.width, visible[row],
                                                   &row_max[row], &row_sum[row]);
            if (rescale != 1.0f) {
              float* out_row = oo + r * out_stride;
              for (int64_t c = 0; c < d; ++c) out_row[c] *= rescale;
            }
          }
          RowMajorSgemm(false, false, rows, d, tile.width, scores.data(), tile.width, vv + c0 * d, d, 1.0f, oo,
                        out_stride);
        }
        for (int64_t r = 0; r < rows; ++r) {
          const float sum = row_sum[static_cast<size_t>(r)];
          const float inverse = 1.0f / sum;
          float* out_row = oo + r * out_stride;
          for (int64_t c = 0; c < d; ++c) out_row[c] *= inverse;
          if (lse_p != nullptr) lse_p[(b * heads + h) * T + r0 + r] = row_max[static_cast<size_t>(r)] + logf(sum);
        }
      }
    }
  });
  return out;
}

at::Tensor TiledCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const at::Tensor& alibi_slopes, const at::Tensor& doc_start) {
  TORCH_CHECK(TiledAttentionAvailable(), "TiledCausalAttention: this build has no sgemm_ (RUNG_HAVE_SGEMM)");
  TORCH_CHECK(!(at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad())),
              "TiledCausalAttention: forward only; inputs that require a gradient take "
              "TiledCausalAttentionTraining (tiled_attention_training.h)");
  return TiledAttentionForward(CheckCpuAttentionInputs(q, k, v, alibi_slopes, doc_start, "TiledCausalAttention"),
                               nullptr);
}

}  // namespace rung
