// core/model/attention_tile.h
//
// One tile of causal attention scores on CPU, for the tiled kernels: the query rows [r0, r0 + rows) of
// one head against the keys [c0, c0 + width) of its KV head,
//   S = Q_blk K_tile^T                     (one single-threaded sgemm; q carries 1/sqrt(d))
//   S_rj += m_h (c0 + j - i)               (ALiBi, on the visible entries only), i = r0 + r
// and, per row, the tile columns [begin, end) it sees: s_i <= c0 + j <= i, s_i = doc_start[b, i] or 0.
// Entries outside a row's visible columns are left as the product wrote them: callers never read them
// as scores. The forward (tiled_attention.h) and the backward (tiled_attention_training.h) both score
// here, so the backward's recomputed scores are the forward's, bit for bit.
#pragma once

#include <cstdint>

namespace rung {

// The visible columns of one row of a tile; empty (begin >= end) when the row sees none of its keys.
struct VisibleColumns {
  int64_t begin = 0, end = 0;
};

struct ScoreTileSpec {
  const float* q = nullptr;              // the block's first query row; rows of `dim` floats
  const float* k = nullptr;              // key 0 of the KV head; rows of `dim` floats
  int64_t dim = 0;
  int64_t r0 = 0, rows = 0;              // query positions [r0, r0 + rows)
  int64_t c0 = 0, width = 0;             // key positions [c0, c0 + width)
  const int64_t* row_start = nullptr;    // doc_start[b, :] (position 0 of the row), or null: every s_i = 0
  float slope = 0.0f;                    // the head's ALiBi slope, 0 without ALiBi
};

// The first key any query of [r0, r1) sees: min_i s_i, 0 without document starts. Key tiles that end
// at or before it hold no visible score of the block.
int64_t FirstVisibleKey(const int64_t* row_start, int64_t r0, int64_t r1);

// Writes S (rows x width, row stride width) into `scores` and each row's visible columns into
// `visible[0 .. rows)`. REQUIRES: RowMajorSgemmAvailable().
void ScoreTile(const ScoreTileSpec& tile, float* scores, VisibleColumns* visible);

}  // namespace rung
