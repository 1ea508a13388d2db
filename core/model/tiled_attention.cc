// Compiled with -ffast-math (see core/CMakeLists.txt) so that GCC vectorizes expf with glibc's
// libmvec; nothing here tests for NaN or infinity: hidden scores are never exponentiated, and a row's
// running maximum starts from its first visible score.
#include "core/model/tiled_attention.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/model/row_major_sgemm.h"

namespace rung {

bool TiledAttentionAvailable() { return RowMajorSgemmAvailable(); }

namespace {

constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyTile = 256;

// One row of a score tile over keys [c0, c0 + width): the scores of the visible keys [first, last) become
// exp(score - new max) and the rest 0; the row's running maximum and sum advance. Returns the factor the
// row's output accumulated so far must be multiplied by (0 before the row's first visible key).
__attribute__((target_clones("avx2", "default"))) float OnlineSoftmaxRow(float* row, int64_t c0, int64_t width,
                                                                         int64_t first, int64_t last, int64_t query,
                                                                         float slope, float* running_max,
                                                                         float* running_sum) {
  const int64_t begin = std::max<int64_t>(first - c0, 0), end = std::min<int64_t>(last - c0, width);
  if (begin >= end) {
    std::fill(row, row + width, 0.0f);
    return 1.0f;
  }
  if (slope != 0.0f) {
    for (int64_t j = begin; j < end; ++j) row[j] += slope * static_cast<float>(c0 + j - query);
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

at::Tensor TiledCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const at::Tensor& alibi_slopes, const at::Tensor& doc_start) {
  TORCH_CHECK(TiledAttentionAvailable(), "TiledCausalAttention: this build has no sgemm_ (RUNG_HAVE_SGEMM)");
  TORCH_CHECK(q.device().is_cpu() && q.scalar_type() == at::kFloat && k.scalar_type() == at::kFloat &&
                  v.scalar_type() == at::kFloat && q.is_contiguous() && k.is_contiguous() && v.is_contiguous(),
              "TiledCausalAttention: needs contiguous fp32 CPU tensors");
  TORCH_CHECK(!(at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad())),
              "TiledCausalAttention: forward only; inputs that require a gradient take the slab kernel");
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.sizes() == k.sizes() && q.size(0) == k.size(0) &&
                  q.size(2) == k.size(2) && q.size(3) == k.size(3) && k.size(1) > 0 && q.size(1) % k.size(1) == 0,
              "TiledCausalAttention: q [B, heads, T, d], k and v [B, kv_heads, T, d], heads a multiple of kv_heads");
  const int64_t batch = q.size(0), heads = q.size(1), kv_heads = k.size(1), time = q.size(2), dim = q.size(3);
  const int64_t groups = heads / kv_heads;
  at::Tensor starts;
  if (doc_start.defined()) {
    TORCH_CHECK(doc_start.device().is_cpu() && doc_start.scalar_type() == at::kLong && doc_start.dim() == 2 &&
                    doc_start.size(0) == batch && doc_start.size(1) == time,
                "TiledCausalAttention: doc_start must be [B, T] int64 on the CPU");
    starts = doc_start.contiguous();
    const bool inside_window =
        starts.ge(0).all().item<bool>() && starts.le(at::arange(time, starts.options())).all().item<bool>();
    TORCH_CHECK(inside_window, "TiledCausalAttention: doc_start[b, i] must lie in [0, i]");
  }
  at::Tensor slopes;
  if (alibi_slopes.defined()) {
    TORCH_CHECK(alibi_slopes.numel() == heads, "TiledCausalAttention: alibi_slopes must have one slope per head");
    slopes = alibi_slopes.to(at::kCPU, at::kFloat).contiguous();
  }
  at::Tensor out = at::empty({batch, time, heads * dim}, q.options());
  const float* qp = q.data_ptr<float>();
  const float* kp = k.data_ptr<float>();
  const float* vp = v.data_ptr<float>();
  const float* slope_p = slopes.defined() ? slopes.data_ptr<float>() : nullptr;
  const int64_t* start_p = starts.defined() ? starts.data_ptr<int64_t>() : nullptr;
  float* op = out.data_ptr<float>();
  const int64_t T = time, d = dim, out_stride = heads * dim;
  const int64_t blocks = (T + kQueryBlock - 1) / kQueryBlock;
  const int64_t units = batch * heads * blocks;  // unit = (block, b, h), block slowest: interleaves the triangle
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), units));
  at::parallel_for(0, threads, 1, [&](int64_t thread_begin, int64_t thread_end) {
    std::vector<float> scores(static_cast<size_t>(kQueryBlock * kKeyTile));
    std::vector<float> row_max(kQueryBlock), row_sum(kQueryBlock);
    for (int64_t thread = thread_begin; thread < thread_end; ++thread) {
      for (int64_t unit = thread; unit < units; unit += threads) {
        // Alternate directions through the blocks so that each thread gets long and short ones alike.
        const int64_t block_index = unit / (batch * heads);
        const int64_t block = (block_index % 2 == 0) ? block_index / 2 : blocks - 1 - block_index / 2;
        const int64_t b = (unit / heads) % batch, h = unit % heads;
        const int64_t r0 = block * kQueryBlock, r1 = std::min(T, r0 + kQueryBlock), rows = r1 - r0;
        const int64_t slab = b * kv_heads + h / groups;
        const float* qq = qp + ((b * heads + h) * T + r0) * d;
        const float* kk = kp + slab * T * d;
        const float* vv = vp + slab * T * d;
        const int64_t* row_start = start_p != nullptr ? start_p + b * T : nullptr;
        const float slope = slope_p != nullptr ? slope_p[h] : 0.0f;
        float* oo = op + b * T * out_stride + r0 * out_stride + h * d;
        int64_t first_key = r1;
        for (int64_t i = r0; i < r1; ++i) first_key = std::min(first_key, row_start != nullptr ? row_start[i] : 0);
        std::fill(row_max.begin(), row_max.end(), 0.0f);
        std::fill(row_sum.begin(), row_sum.end(), 0.0f);
        for (int64_t r = 0; r < rows; ++r) std::fill(oo + r * out_stride, oo + r * out_stride + d, 0.0f);
        for (int64_t c0 = first_key; c0 < r1; c0 += kKeyTile) {
          const int64_t width = std::min(kKeyTile, r1 - c0);
          RowMajorSgemm(false, true, rows, width, d, qq, d, kk + c0 * d, d, 0.0f, scores.data(), width);
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = r0 + r;
            const float rescale =
                OnlineSoftmaxRow(scores.data() + r * width, c0, width, row_start != nullptr ? row_start[i] : 0, i + 1,
                                 i, slope, &row_max[static_cast<size_t>(r)], &row_sum[static_cast<size_t>(r)]);
            if (rescale != 1.0f) {
              float* out_row = oo + r * out_stride;
              for (int64_t c = 0; c < d; ++c) out_row[c] *= rescale;
            }
          }
          RowMajorSgemm(false, false, rows, d, width, scores.data(), width, vv + c0 * d, d, 1.0f, oo, out_stride);
        }
        for (int64_t r = 0; r < rows; ++r) {
          const float inverse = 1.0f / row_sum[static_cast<size_t>(r)];
          float* out_row = oo + r * out_stride;
          for (int64_t c = 0; c < d; ++c) out_row[c] *= inverse;
        }
      }
    }
  });
  return out;
}

}  // namespace rung
