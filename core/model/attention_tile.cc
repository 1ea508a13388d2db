#include "core/model/attention_tile.h"

#include <algorithm>

#include "core/model/row_major_sgemm.h"

namespace rung {

namespace {

__attribute__((target_clones("avx2", "default"))) void AddAlibi(float* row, int64_t begin, int64_t end,
                                                                float offset, float slope) {
  for (int64_t j = begin; j < end; ++j) row[j] += slope * (offset + static_cast<float>(j));
}

}  // namespace

int64_t FirstVisibleKey(const int64_t* row_start, int64_t r0, int64_t r1) {
  if (row_start == nullptr) return 0;
  int64_t first = r1;
  for (int64_t i = r0; i < r1; ++i) first = std::min(first, row_start[i]);
  return first;
}

void ScoreTile(const ScoreTileSpec& tile, float* scores, VisibleColumns* visible) {
  const int64_t d = tile.dim, width = tile.width;
  RowMajorSgemm(false, true, tile.rows, width, d, tile.q, d, tile.k + tile.c0 * d, d, 0.0f, scores, width);
  for (int64_t r = 0; r < tile.rows; ++r) {
    const int64_t i = tile.r0 + r;
    const int64_t first = tile.row_start != nullptr ? tile.row_start[i] : 0;
    VisibleColumns& columns = visible[r];
    columns.begin = std::clamp<int64_t>(first - tile.c0, 0, width);
    columns.end = std::clamp<int64_t>(i + 1 - tile.c0, 0, width);
    if (tile.slope != 0.0f && columns.begin < columns.end) {
      // slope * (c0 + j - i): the distance term in float, as the composite path forms it, up to rounding.
      AddAlibi(scores + r * width, columns.begin, columns.end, static_cast<float>(tile.c0 - i), tile.slope);
    }
  }
}

}  // namespace rung
